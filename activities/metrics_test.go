package activities_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/metrics/metricstest"
)

// TestDeliveryMetrics: each attempt is counted by outcome with its duration, and the
// event by type once its status is final (not while retrying); read from a real scrape.
func TestDeliveryMetrics(t *testing.T) {
	tests := []struct {
		name        string
		eventType   string
		respond     int // receiver status; 0: acknowledge
		enabled     bool
		maxAttempts int32
		outcome     string
		final       string // "" for none
	}{
		{"delivered", "account-created", 0, true, 6, "succeeded", "delivered"},
		{"retrying", "account-updated", http.StatusInternalServerError, true, 6, "failed", ""},
		{"failed on the last attempt", "account-deleted", http.StatusInternalServerError, true, 1, "failed", "failed"},
		{"skipped", "deal-active", 0, false, 6, "skipped", "skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.respond != 0 {
				f.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tt.respond) })
			}
			f.endpoint(t, f.rc.URL+"/hooks", http.MethodPost, tt.enabled)
			ev := f.db.Event(t, tt.eventType, map[string]any{"id": "x"}, time.Time{})
			attempts := `revops_webhook_delivery_attempts_total{outcome="` + tt.outcome + `"}`
			durations := `revops_webhook_delivery_attempt_duration_seconds_count{outcome="` + tt.outcome + `"}`
			finals := map[string]string{}
			for _, st := range []string{"delivered", "failed", "skipped", "retrying"} {
				finals[st] = `revops_webhook_events_final_total{status="` + st + `",type="` + tt.eventType + `"}`
			}
			before := metricstest.Scrape(t)
			_ = f.deliver(t, ev, tt.maxAttempts)
			after := metricstest.Scrape(t)
			for series, want := range map[string]float64{attempts: 1, durations: 1} {
				if d := after.Value(t, series) - before.Value(t, series); d != want {
					t.Errorf("%s grew by %v, want %v", series, d, want)
				}
			}
			for st, series := range finals {
				want := 0.0
				if st == tt.final {
					want = 1
				}
				if d := after.Value(t, series) - before.Value(t, series); d != want {
					t.Errorf("%s grew by %v, want %v", series, d, want)
				}
			}
		})
	}
}

package metrics_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
)

// value is a series that must be in the scrape.
func value(t *testing.T, page metricstest.Page, series string) float64 {
	t.Helper()
	v, ok := page.Lookup(t, series)
	if !ok {
		t.Fatalf("series %s not in the scrape", series)
	}
	return v
}

func TestDeliveryMetricsAreScraped(t *testing.T) {
	metrics.DeliveryAttempt("succeeded", 120*time.Millisecond)
	metrics.DeliveryAttempt("failed", 30*time.Second)
	metrics.DeliveryAttempt("failed", 2*time.Second)
	metrics.EventFinal("deal-signed", "delivered")
	metrics.EventFinal("deal-signed", "failed")
	metrics.EventFinal("deal-signed", "failed")
	page := metricstest.Scrape(t)
	for series, want := range map[string]float64{
		`revops_webhook_delivery_attempts_total{outcome="succeeded"}`:                            1,
		`revops_webhook_delivery_attempts_total{outcome="failed"}`:                               2,
		`revops_webhook_delivery_attempt_duration_seconds_count{outcome="failed"}`:               2,
		`revops_webhook_delivery_attempt_duration_seconds_sum{outcome="failed"}`:                 32,
		`revops_webhook_delivery_attempt_duration_seconds_bucket{outcome="succeeded",le="0.25"}`: 1,
		`revops_webhook_delivery_attempt_duration_seconds_bucket{outcome="failed",le="2.5"}`:     1,
		`revops_webhook_events_final_total{status="delivered",type="deal-signed"}`:               1,
		`revops_webhook_events_final_total{status="failed",type="deal-signed"}`:                  2,
	} {
		if got := value(t, page, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// TestOutboxGauge: the gauge reads the registered function at each scrape; a failing
// read shows NaN, and registering again replaces the function.
func TestOutboxGauge(t *testing.T) {
	const series = "revops_outbox_oldest_undispatched_age_seconds"
	tests := []struct {
		name string
		age  func(context.Context) (time.Duration, error)
		want float64
	}{
		{"waiting", func(context.Context) (time.Duration, error) { return 90 * time.Second, nil }, 90},
		{"none", func(context.Context) (time.Duration, error) { return 0, nil }, 0},
		{"error", func(context.Context) (time.Duration, error) { return 0, errors.New("db down") }, math.NaN()},
		{"deadline", func(ctx context.Context) (time.Duration, error) {
			if _, ok := ctx.Deadline(); !ok {
				return 0, errors.New("no deadline")
			}
			return 1500 * time.Millisecond, nil
		}, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			metrics.RegisterOutbox(tt.age)
			got := value(t, metricstest.Scrape(t), series)
			if got != tt.want && !(math.IsNaN(got) && math.IsNaN(tt.want)) {
				t.Fatalf("%s = %v, want %v", series, got, tt.want)
			}
		})
	}
}

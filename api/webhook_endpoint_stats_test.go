package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/models"
)

// The stats query is checked at the edge as §18's values query is (every fault at once,
// each naming its parameter), then against the window: boundaries, to after from, at most
// 1,000 windows. An endpoint that is not the environment's is a 404; public keys get 403.
func TestEndpointStatsParameters(t *testing.T) {
	h, rc := newReceiving(t)
	id := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/x"})["id"].(string)
	path := "/v1/webhook_endpoints/" + id + "/stats?"
	const day = "from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z"
	for _, c := range []struct{ query, faults string }{
		{"to=2026-11-02T00:00:00Z&window=hour", "from:parameter_missing"},
		{"from=2026-11-01T00:00:00Z&window=hour", "to:parameter_missing"},
		{day, "window:parameter_missing"},
		{day + "&window=minute", "window:parameter_invalid"},
		{day + "&window=week", "window:parameter_invalid"},
		{day + "&window=HOUR", "window:parameter_invalid"},
		{"from=yesterday&to=2026-11-02T00:00:00Z&window=hour", "from:parameter_invalid"},
		{"from=1761955200&to=2026-11-02T00:00:00Z&window=hour", "from:parameter_invalid"},
		{"window=fortnight&from=x", "from:parameter_invalid to:parameter_missing window:parameter_invalid"},
		// Boundaries (UTC), order and the window bound: checked once the forms are right.
		{"from=2026-11-01T00:30:00Z&to=2026-11-02T00:00:00Z&window=hour", "from:parameter_invalid"},
		{"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:01Z&window=hour", "to:parameter_invalid"},
		{"from=2026-11-01T01:00:00Z&to=2026-11-02T00:00:00Z&window=day", "from:parameter_invalid"},
		{"from=2026-11-01T00:00:00%2B01:00&to=2026-11-02T00:00:00Z&window=day", "from:parameter_invalid"},
		{"from=2026-11-02T00:00:00Z&to=2026-11-02T00:00:00Z&window=hour", "to:parameter_invalid"},
		{"from=2026-11-03T00:00:00Z&to=2026-11-02T00:00:00Z&window=day", "to:parameter_invalid"},
		{"from=2026-01-01T00:00:00Z&to=2026-02-11T17:00:00Z&window=hour", "to:parameter_invalid"}, // 1,001 hours
		{"from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&window=day", "to:parameter_invalid"},
	} {
		r := h.do("GET", path+c.query, h.key[skSandbox], nil)
		if got := statsFaults(t, r); r.Status != http.StatusBadRequest || got != c.faults {
			t.Errorf("%s: %d, faults %q; want 400 %q: %s", c.query, r.Status, got, c.faults, r.Body)
		}
	}
	// The most windows a query may cover: 1,000.
	for _, q := range []string{"from=2026-01-01T00:00:00Z&to=2026-02-11T16:00:00Z&window=hour", "from=2024-01-01T00:00:00Z&to=2026-09-27T00:00:00Z&window=day"} {
		if r := h.do("GET", path+q, h.key[skSandbox], nil); r.Status != http.StatusOK {
			t.Errorf("%s (1,000 windows): %d: %s", q, r.Status, r.Body)
		}
	}
	ok := day + "&window=hour"
	expectError(t, h.do("GET", "/v1/webhook_endpoints/00000000-0000-4000-8000-000000000000/stats?"+ok, h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
	expectError(t, h.do("GET", path+ok, h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
	if r := h.do("GET", path+ok, h.key["public sandbox"], nil); r.Status != http.StatusForbidden {
		t.Errorf("a public key: %d, want 403: %s", r.Status, r.Body)
	}
}

// Attempts recorded for an endpoint come back as its stats: exact counts, the timeout
// among the failures, skipped attempts left out, p50/p95 as bucket bounds, empty windows
// left out, and the endpoint's other environment sees nothing of them.
func TestEndpointStatsThroughTheAPI(t *testing.T) {
	h, rc := newReceiving(t)
	ctx := context.Background()
	env := h.objEnv("sandbox")
	id := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/x"})["id"].(string)
	h.newObjAccount("Globex")
	ds := h.endpointDeliveries(env, id)
	at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	for _, a := range []models.DeliveryAttempt{
		{StartedAt: at.Add(time.Minute), DurationMS: 40, Outcome: models.AttemptSucceeded},
		{StartedAt: at.Add(2 * time.Minute), DurationMS: 300, Outcome: models.AttemptFailed, Error: "status 500", StatusCode: 500},
		{StartedAt: at.Add(3 * time.Minute), DurationMS: 30002, Outcome: models.AttemptFailed, Error: models.AttemptTimeoutPrefix + "30s"},
		{StartedAt: at.Add(4 * time.Minute), Outcome: models.AttemptSkipped, Error: models.DeliveryEndpointDisabled},
		{StartedAt: at.Add(2*time.Hour + time.Minute), DurationMS: 7, Outcome: models.AttemptSucceeded},
	} {
		a.EventID, a.DeliveryID, a.RunID, a.Number, a.Trigger = ds[0].EventID, ds[0].ID, "run-1", 1, models.TriggerScheduled
		if err := webhooktest.RecordAttempt(ctx, h.store, env, &a, models.EventRetrying); err != nil {
			t.Fatal(err)
		}
	}
	q := "?from=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z&window="
	r := h.do("GET", "/v1/webhook_endpoints/"+id+"/stats"+q+"hour", h.key[skSandbox], nil)
	want := `{"object":"endpoint_stats","endpoint_id":"` + id + `","window":"hour","data":[` +
		`{"window_start":"2026-11-02T10:00:00Z","window_end":"2026-11-02T11:00:00Z","attempts":3,"succeeded":1,"failed":2,"timeouts":1,"success_rate":0.3333333333333333,"duration_ms_p50":500,"duration_ms_p95":30000},` +
		`{"window_start":"2026-11-02T12:00:00Z","window_end":"2026-11-02T13:00:00Z","attempts":1,"succeeded":1,"failed":0,"timeouts":0,"success_rate":1,"duration_ms_p50":10,"duration_ms_p95":10}]}`
	if r.Status != http.StatusOK || compactJSON(t, r.Body) != want {
		t.Errorf("hourly stats: %d\n got %s\nwant %s", r.Status, r.Body, want)
	}
	r = h.do("GET", "/v1/webhook_endpoints/"+id+"/stats"+q+"day", h.key[skSandbox], nil)
	want = `{"object":"endpoint_stats","endpoint_id":"` + id + `","window":"day","data":[` +
		`{"window_start":"2026-11-02T00:00:00Z","window_end":"2026-11-03T00:00:00Z","attempts":4,"succeeded":2,"failed":2,"timeouts":1,"success_rate":0.5,"duration_ms_p50":50,"duration_ms_p95":30000}]}`
	if r.Status != http.StatusOK || compactJSON(t, r.Body) != want {
		t.Errorf("daily stats: %d\n got %s\nwant %s", r.Status, r.Body, want)
	}
	// A range without attempts: no window.
	r = h.do("GET", "/v1/webhook_endpoints/"+id+"/stats?from=2026-11-03T00:00:00Z&to=2026-11-04T00:00:00Z&window=hour", h.key[skSandbox], nil)
	if r.Status != http.StatusOK || compactJSON(t, r.Body) != `{"object":"endpoint_stats","endpoint_id":"`+id+`","window":"hour","data":[]}` {
		t.Errorf("stats of a range without attempts: %d %s", r.Status, r.Body)
	}
}

// statsFaults is faultsOf, or the error's own "param:code" when it lists no faults.
func statsFaults(t *testing.T, r response) string {
	t.Helper()
	if f := faultsOf(t, r); f != "" {
		return f
	}
	e, _ := r.json(t)["error"].(map[string]any)
	return fmt.Sprint(e["param"], ":", e["code"])
}

// endpointDeliveries are the deliveries to endpoint id of env's events.
func (h *harness) endpointDeliveries(env models.Env, id string) []models.WebhookDelivery {
	h.t.Helper()
	var ds []models.WebhookDelivery
	if err := h.rawDB().Where("environment_id = ? AND endpoint_id = ?", env.ID, id).Find(&ds).Error; err != nil {
		h.t.Fatal(err)
	}
	if len(ds) == 0 {
		h.t.Fatalf("no delivery to endpoint %s", id)
	}
	return ds
}

// compactJSON is b without insignificant white space, its members in their order.
func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return out.String()
}

package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/config"
	"github.com/revops/revops/models"
)

// fakeDispatcher stands in for the dispatcher in the API's replay tests (the real one
// is tested in internal/e2e): it counts the events a replay hands over. The database
// decides the replays (store.ReplayDeliveries).
type fakeDispatcher struct {
	q   *api.DispatchQueue // in front of it, as in production
	mu  sync.Mutex
	got map[string]int
}

func (f *fakeDispatcher) Dispatch(_ context.Context, evs []models.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range evs {
		if e.RedispatchAt != nil {
			f.got[e.ID]++
		}
	}
}

func (f *fakeDispatcher) count(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[id]
}

func withFakeDispatcher(f *fakeDispatcher) harnessOption {
	return func(_ *config.Config, d *api.Deps) {
		f.got = map[string]int{}
		f.q = api.NewDispatchQueue(f, nil)
		d.Dispatch = f.q
	}
}

// A replay is decided in the database and answered 202 at once, the event handed to
// the dispatcher; a delivery still pending is a 409; an endpoint_id that is no id is a
// 400 that changes nothing.
func TestReplayOne(t *testing.T) {
	f := &fakeDispatcher{}
	h := newHarness(t, withFakeDispatcher(f))
	_, all := eventsFixture(h)
	failed, _ := listIDs(h, "status=failed")
	o := h.mustObj(http.StatusAccepted, "POST", "/v1/events/"+failed[0]+"/replay", nil)
	if o["object"] != "event" || o["id"] != failed[0] || o["status"] != "pending" {
		t.Fatalf("replay answered %v", o)
	}
	f.q.Idle()
	if f.count(failed[0]) != 1 {
		t.Fatalf("replayed event handed to the dispatcher %d times, want 1", f.count(failed[0]))
	}
	// The replayed delivery is pending now: a second replay is refused.
	expectError(t, h.do("POST", "/v1/events/"+failed[0]+"/replay", h.key[skSandbox], nil), http.StatusConflict, "delivery_in_progress")
	expectError(t, h.do("POST", "/v1/events/"+all[2]+"/replay", h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
	expectError(t, h.do("POST", "/v1/events/"+all[2]+"/replay", h.key[skSandbox], map[string]any{"endpoint_id": "not an id"}), http.StatusBadRequest, "parameter_invalid")
	expectError(t, h.do("POST", "/v1/events/"+all[2]+"/replay", h.key[skSandbox], map[string]any{"endpoint": "x"}), http.StatusBadRequest, "unknown_parameter")
	f.q.Idle()
	if f.count(all[2]) != 0 {
		t.Error("a refused replay was dispatched")
	}
}

func TestBulkReplayValidation(t *testing.T) {
	f := &fakeDispatcher{}
	h := newHarness(t, withFakeDispatcher(f))
	tests := []struct {
		name string
		body any
		code string
	}{
		{"empty filter", map[string]any{}, "parameter_missing"},
		{"unknown status", map[string]any{"status": "lost"}, "parameter_invalid"},
		{"unknown type", map[string]any{"type": "deal-exploded"}, "parameter_invalid"},
		{"bad time", map[string]any{"status": "failed", "created_after": "last week"}, "parameter_invalid"},
		{"time as bool", map[string]any{"status": "failed", "created_before": true}, "parameter_invalid"},
		{"empty range", map[string]any{"created_after": 200, "created_before": "100"}, "parameter_invalid"},
		{"unknown field", map[string]any{"status": "failed", "since": "24h"}, "unknown_parameter"},
		{"not JSON", []byte("{"), "invalid_json"},
		{"endpoint_id not an id", map[string]any{"endpoint_id": "../x"}, "parameter_invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectError(t, h.do("POST", "/v1/events/replay", h.key[skSandbox], tc.body), http.StatusBadRequest, tc.code)
		})
	}
	expectError(t, h.do("GET", "/v1/events/replay/00000000-0000-0000-0000-000000000000", h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
	if len(f.got) != 0 {
		t.Fatalf("a refused request replayed %v", f.got)
	}
}

// More failed events than one batch, plus events the filter leaves out.
func TestBulkReplayJob(t *testing.T) {
	f := &fakeDispatcher{}
	h := newHarness(t, withFakeDispatcher(f))
	env := h.objEnv("sandbox")
	if _, err := h.store.CreateWebhookEndpoint(context.Background(), env, models.WebhookEndpoint{
		URL: "https://hooks.example/x", Method: "POST", Enabled: true, Secret: "whsec_fixture",
	}, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	const n = 130
	var failed []string
	for i := range n + 5 {
		id := h.newObjAccount("Bulk" + string(rune('A'+i%26)) + time.Now().Format("150405.000000"))
		ev := h.objEvents(id)[0]
		if i < n {
			failed = append(failed, ev.ID)
			if err := h.store.SetEventStatus(context.Background(), env, ev.ID, models.EventFailed); err != nil {
				t.Fatal(err)
			}
		}
	}
	job := h.mustObj(http.StatusAccepted, "POST", "/v1/events/replay", map[string]any{"status": "failed", "type": "account-created"})
	if job["object"] != "replay_job" || job["matched"] != float64(n) || (job["status"] != "running" && job["status"] != "done") {
		t.Fatalf("job = %v", job)
	}
	id := job["id"].(string)
	deadline := time.Now().Add(20 * time.Second)
	for job["status"] != "done" {
		if time.Now().After(deadline) {
			t.Fatalf("job not done: %v", job)
		}
		time.Sleep(50 * time.Millisecond)
		job = h.mustObj(http.StatusOK, "GET", "/v1/events/replay/"+id, nil)
	}
	if job["replayed"] != float64(n) || job["failed"] != 0.0 || job["finished_at"] == nil {
		t.Fatalf("finished job = %v", job)
	}
	f.q.Idle()
	for _, e := range failed {
		if got := f.count(e); got != 1 {
			t.Fatalf("event %s handed to the dispatcher %d times, want 1", e, got)
		}
	}
	expectError(t, h.do("GET", "/v1/events/replay/"+id, h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
	// Nothing left to match: the job is done at once.
	empty := h.mustObj(http.StatusAccepted, "POST", "/v1/events/replay", map[string]any{"status": "failed", "type": "deal-signed"})
	if empty["status"] != "done" || empty["matched"] != 0.0 {
		t.Fatalf("empty job = %v", empty)
	}
}

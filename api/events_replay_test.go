package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// fakeReplayer stands in for Temporal in the API's replay tests (the real one is tested
// in internal/e2e): it puts the event back to pending, as MarkReplayed does, and refuses
// the events marked busy as a running delivery would.
type fakeReplayer struct {
	st   *store.Store
	mu   sync.Mutex
	busy map[string]bool
	got  map[string]int
}

func (f *fakeReplayer) Replay(ctx context.Context, e models.Event) error {
	f.mu.Lock()
	busy := f.busy[e.ID]
	if !busy {
		f.got[e.ID]++
	}
	f.mu.Unlock()
	if busy {
		return apperr.Conflict("delivery_in_progress", "busy")
	}
	return f.st.SetEventStatus(ctx, store.EnvOf(e), e.ID, models.EventPending)
}

func withFakeReplayer(f *fakeReplayer) harnessOption {
	return func(_ *config.Config, d *api.Deps) {
		f.st, f.busy, f.got = d.Store, map[string]bool{}, map[string]int{}
		d.Replay = f
	}
}

func TestReplayOne(t *testing.T) {
	f := &fakeReplayer{}
	h := newHarness(t, withFakeReplayer(f))
	_, all := eventsFixture(h)
	failed, _ := listIDs(h, "status=failed")
	o := h.mustObj(http.StatusAccepted, "POST", "/v1/events/"+failed[0]+"/replay", nil)
	if o["object"] != "event" || o["id"] != failed[0] || o["status"] != "pending" || f.got[failed[0]] != 1 {
		t.Fatalf("replay answered %v; replays %v", o, f.got)
	}
	f.busy[all[0]] = true
	expectError(t, h.do("POST", "/v1/events/"+all[0]+"/replay", h.key[skSandbox], nil), http.StatusConflict, "delivery_in_progress")
	expectError(t, h.do("POST", "/v1/events/"+all[2]+"/replay", h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
	if f.got[all[2]] != 0 {
		t.Error("an event of another environment was replayed")
	}
}

func TestBulkReplayValidation(t *testing.T) {
	f := &fakeReplayer{}
	h := newHarness(t, withFakeReplayer(f))
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

// More failed events than one batch, one of them busy, plus events the filter leaves out.
func TestBulkReplayJob(t *testing.T) {
	f := &fakeReplayer{}
	h := newHarness(t, withFakeReplayer(f))
	env := h.objEnv("sandbox")
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
	f.busy[failed[7]] = true
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
	if job["replayed"] != float64(n-1) || job["failed"] != 1.0 || job["finished_at"] == nil {
		t.Fatalf("finished job = %v", job)
	}
	if len(f.got) != n-1 {
		t.Fatalf("%d events replayed, want %d", len(f.got), n-1)
	}
	for _, e := range failed {
		if f.got[e] > 1 {
			t.Fatalf("event %s replayed %d times", e, f.got[e])
		}
	}
	expectError(t, h.do("GET", "/v1/events/replay/"+id, h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
	// Nothing left to match: the job is done at once.
	empty := h.mustObj(http.StatusAccepted, "POST", "/v1/events/replay", map[string]any{"status": "failed", "type": "deal-signed"})
	if empty["status"] != "done" || empty["matched"] != 0.0 {
		t.Fatalf("empty job = %v", empty)
	}
}

package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// fakeDispatcher stands in for the dispatcher in the API's replay tests (the real one
// is tested in internal/testkit/e2e): it counts the events a replay hands over. The database
// decides the replays (replay.Deliveries).
type fakeDispatcher struct {
	q   *dispatch.Queue // in front of it, as in production
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
		f.q = dispatch.NewQueue(f, nil, nil)
		afterCommit(d, f.q, nil)
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

// A single-event replay sent many times at once with one Idempotency-Key replays the
// event once: the replay and its kept answer commit together (CONTRACT §14, §21), and
// every other request gets that answer back, byte for byte, on both databases.
func TestReplayOneIdempotent(t *testing.T) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			f := &fakeDispatcher{}
			h := newHarnessOn(t, db, withFakeDispatcher(f))
			eventsFixture(h)
			failed, _ := listIDs(h, "status=failed")
			first := concurrently(t, h, 10, "POST", "/v1/events/"+failed[0]+"/replay", []byte(`{}`), http.StatusAccepted)
			if o := first.json(t); o["id"] != failed[0] || o["status"] != "pending" || len(o["deliveries"].([]any)) != 1 {
				t.Fatalf("replay answered %v", o)
			}
			f.q.Idle()
			if n := f.count(failed[0]); n != 1 {
				t.Fatalf("event replayed %d times, want once", n)
			}
		})
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

// fakeJobs records the replay jobs whose BulkReplay workflow the API asks for.
type fakeJobs struct {
	mu   sync.Mutex
	jobs []store.Job
	done chan struct{}
}

func (f *fakeJobs) StartDetached(_ context.Context, j store.Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs = append(f.jobs, j)
	close(f.done)
}

// A bulk replay records its job — the matching deliveries counted, the filter frozen —
// and asks for the job's workflow without running anything itself (CONTRACT §16: no job
// runner in API processes); GET reads the job's row as BulkReplay's pages (played here
// by replay.Page, the activity's one call) advance it, up to done.
func TestBulkReplayJob(t *testing.T) {
	f := &fakeDispatcher{}
	jobs := &fakeJobs{done: make(chan struct{})}
	h := newHarness(t, withFakeDispatcher(f), func(_ *config.Config, d *api.Deps) { afterCommit(d, f.q, jobs) })
	env := h.objEnv("sandbox")
	if _, err := webhook.CreateEndpoint(context.Background(), h.store, env, models.WebhookEndpoint{
		URL: "https://hooks.example/x", Method: "POST", Enabled: true, Secret: "whsec_fixture",
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
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
	if job["object"] != "replay_job" || job["matched"] != float64(n) || job["status"] != "running" || job["replayed"] != 0.0 {
		t.Fatalf("job = %v", job)
	}
	id := job["id"].(string)
	<-jobs.done
	if len(jobs.jobs) != 1 || jobs.jobs[0].ID != id {
		t.Fatalf("workflows asked for %+v, want job %s", jobs.jobs, id)
	}
	cursor := ""
	for page := 1; ; page++ {
		p, err := replay.Page(context.Background(), h.store, id, cursor, 50)
		if err != nil {
			t.Fatal(err)
		}
		cursor = p.CursorID
		job = h.mustObj(http.StatusOK, "GET", "/v1/events/replay/"+id, nil)
		if job["replayed"] != float64(min(page*50, n)) {
			t.Fatalf("after page %d: %v", page, job)
		}
		if p.Done {
			break
		}
		if job["status"] != "running" {
			t.Fatalf("after page %d: %v", page, job)
		}
	}
	if job["status"] != "done" || job["replayed"] != float64(n) || job["failed"] != 0.0 || job["finished_at"] == nil {
		t.Fatalf("finished job = %v", job)
	}
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

// A bulk replay sent many times at once with one Idempotency-Key records one job: the
// job and its kept answer commit together (CONTRACT §14), on both databases.
func TestBulkReplayIdempotent(t *testing.T) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db)
			first := concurrently(t, h, 10, "POST", "/v1/events/replay", []byte(`{"status":"failed"}`), http.StatusAccepted)
			job := first.json(t)
			if job["object"] != "replay_job" {
				t.Fatalf("answer %v", job)
			}
			h.mustObj(http.StatusOK, "GET", "/v1/events/replay/"+job["id"].(string), nil)
		})
	}
}

// An environment runs at most two bulk replay jobs (CONTRACT §17): the third is a 409
// replay_job_limit in the §4 envelope; the other environment is not limited by them.
func TestBulkReplayJobLimit(t *testing.T) {
	h := newHarness(t)
	env := h.objEnv("sandbox")
	if _, err := webhook.CreateEndpoint(context.Background(), h.store, env, models.WebhookEndpoint{
		URL: "https://hooks.example/x", Method: "POST", Enabled: true, Secret: "whsec_fixture",
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	ev := h.objEvents(h.newObjAccount("Limit"))[0]
	if err := h.store.SetEventStatus(context.Background(), env, ev.ID, models.EventFailed); err != nil {
		t.Fatal(err)
	}
	for range replay.MaxRunningJobs {
		job := h.mustObj(http.StatusAccepted, "POST", "/v1/events/replay", map[string]any{"type": "account-created"})
		if job["status"] != "running" {
			t.Fatalf("job = %v", job)
		}
	}
	expectError(t, h.do("POST", "/v1/events/replay", h.key[skSandbox], map[string]any{"type": "account-created"}),
		http.StatusConflict, "replay_job_limit")
	if r := h.do("POST", "/v1/events/replay", h.key["secret live"], map[string]any{"type": "account-created"}); r.Status != http.StatusAccepted {
		t.Fatalf("live environment: %d %s", r.Status, r.Body)
	}
}

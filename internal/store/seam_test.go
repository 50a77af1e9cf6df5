package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// committedRecorder is an AfterCommit that keeps what it is handed.
type committedRecorder struct {
	mu  sync.Mutex
	got []store.Committed
}

func (r *committedRecorder) Committed(_ context.Context, c store.Committed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, c)
}

// take returns what was handed over since the last take.
func (r *committedRecorder) take() []store.Committed {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// events are the events of what was handed over since the last take.
func (r *committedRecorder) events() []models.Event {
	var out []models.Event
	for _, c := range r.take() {
		out = append(out, c.Events...)
	}
	return out
}

// handedOver wires a recorder as db's after commit.
func handedOver(db seeded) *committedRecorder {
	r := &committedRecorder{}
	db.st.SetAfterCommit(r)
	return r
}

// Issue 42: every transaction that commits events hands them to after commit, right
// after its commit, as written (with their fan-out); one that rolls back hands nothing,
// and one without events or jobs is not handed over at all.
func TestTransactionsHandTheirEventsOver(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		ep := newEndpoint(t, db, "https://a.example/h", nil, true)
		rec := handedOver(db)
		ev := newAccountEvent(t, db)
		got := rec.take()
		if len(got) != 1 || len(got[0].Events) != 1 || got[0].Events[0].ID != ev.ID || len(got[0].Jobs) != 0 {
			t.Fatalf("handed over %+v, want the one event", got)
		}
		if f := got[0].Events[0].Fanout; f == nil || len(f.Deliveries) != 1 || f.Deliveries[0].EndpointID != ep.ID {
			t.Fatalf("the event handed over carries fanout %+v", f)
		}
		boom := errors.New("rolled back")
		if _, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error {
			tx.Emit(store.Emit{Type: "account-created", ObjectType: "account", ObjectID: "a", Object: map[string]string{}})
			return boom
		}); !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if _, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if got := rec.take(); len(got) != 0 {
			t.Fatalf("a rolled back or empty transaction handed over %+v", got)
		}
	})
}

// A replay hands its event over once committed, marked for redispatch, once however
// many of its deliveries the transaction replayed (a bulk page); a retried page that
// replays nothing hands nothing over.
func TestReplaysHandTheirEventsOver(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		newEndpoint(t, db, "https://a.example/hooks", nil, true)
		newEndpoint(t, db, "https://b.example/hooks", nil, true)
		evs := failedEvents(t, db, 2)
		rec := handedOver(db)
		job, err := replay.CreateJob(ctx, db.st, db.env, events.Filter{Status: models.EventFailed}, time.Now(), idempotency.Reply[replay.JobObject]{})
		if err != nil || job.Matched != 4 {
			t.Fatalf("job %+v, %v", job, err)
		}
		got := rec.take()
		if len(got) != 1 || len(got[0].Events) != 0 || len(got[0].Jobs) != 1 || got[0].Jobs[0] != store.ReplayJobOf(job) {
			t.Fatalf("the job's transaction handed over %+v, want its job", got)
		}
		p, err := replay.Page(ctx, db.st, job.ID, "", 10)
		if err != nil || p.Replayed != 4 {
			t.Fatalf("page %+v, %v", p, err)
		}
		handed := rec.events()
		ids := []string{}
		for _, e := range handed {
			if e.RedispatchAt == nil {
				t.Errorf("event %s handed over without its redispatch mark", e.ID)
			}
			ids = append(ids, e.ID)
		}
		slices.Sort(ids)
		want := []string{evs[0].ID, evs[1].ID}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("the page handed over %v, want each replayed event once: %v", ids, want)
		}
		if _, err := replay.Page(ctx, db.st, job.ID, "", 10); err != nil {
			t.Fatal(err)
		}
		if got := rec.events(); len(got) != 0 {
			t.Fatalf("a retried page handed over %d events", len(got))
		}
	})
}

// The rows that ask for a tenant job hand it over once committed: a new meter's
// backfill, a deleted meter's purge, a deleted endpoint's deletion.
func TestJobsAreHandedOver(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		ep := newEndpoint(t, db, "https://a.example/hooks", nil, true)
		rec := handedOver(db)
		if _, err := webhook.DeleteEndpoint(ctx, db.st, db.env, ep.ID, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
			t.Fatal(err)
		}
		got := rec.take()
		if len(got) != 1 || len(got[0].Jobs) != 1 || got[0].Jobs[0].Kind != store.JobEndpointDeletion || got[0].Jobs[0].ID != ep.ID ||
			got[0].Jobs[0].EnvironmentID != db.env.ID || got[0].Jobs[0].OrganizationID != db.env.OrganizationID {
			t.Fatalf("the deletion handed over %+v", got)
		}
		m := models.Meter{Key: "calls", FilterMetricName: "calls", Aggregation: models.AggSum, Status: models.MeterBackfilling, GroupBy: []string{}}
		if _, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error { return tx.CreateMeter(&m) }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error { return tx.DeleteMeter(m) }); err != nil {
			t.Fatal(err)
		}
		got = rec.take()
		if len(got) != 2 || len(got[0].Jobs) != 1 || got[0].Jobs[0] != store.BackfillOf(m) ||
			len(got[1].Jobs) != 1 || got[1].Jobs[0].Kind != store.JobMeterPurge || got[1].Jobs[0].ID != m.ID || got[1].Jobs[0].Name != "calls" {
			t.Fatalf("the meter's transactions handed over %+v", got)
		}
	})
}

// A store given no fan-out refuses to write events rather than write them without a
// body or deliveries.
func TestEventsNeedAFanOut(t *testing.T) {
	st := testdb.New(t)
	env := testdb.Seed(t, st, models.EnvLive)
	st.SetFanOut(nil)
	_, err := st.InTx(context.Background(), env, func(tx *store.Tx) error {
		tx.Emit(store.Emit{Type: "account-created", ObjectType: "account", ObjectID: "a", Object: map[string]string{}})
		return nil
	})
	if !errors.Is(err, store.ErrNoFanOut) {
		t.Fatalf("emit without a fan-out: %v", err)
	}
}

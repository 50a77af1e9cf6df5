package replay_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/replay"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/webhook/webhooktest"
	"github.com/revops/revops/models"
)

// dispatcher records the events handed to it, as api.DispatchQueue would take them.
type dispatcher struct {
	mu  sync.Mutex
	ids []string
}

func (s *dispatcher) Dispatch(_ context.Context, evs []models.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range evs {
		s.ids = append(s.ids, e.ID)
	}
}

// A job left running by a dead process, half done: another process claims it once it is
// stale and replays only what the cursor has not passed; a fresh job is left alone.
func TestStaleJobIsResumedFromItsCursor(t *testing.T) {
	db := webhooktest.New(t)
	ctx := context.Background()
	base := time.Now().UTC().Add(-time.Hour)
	if _, err := db.Store.CreateWebhookEndpoint(ctx, db.Env, models.WebhookEndpoint{URL: "https://receiver.example/hooks", Method: "POST", Enabled: true, Secret: "whsec_test"}, base); err != nil {
		t.Fatal(err)
	}
	var evs []models.Event
	for i := range 5 {
		evs = append(evs, db.Event(t, "deal-updated", map[string]any{"n": i}, base.Add(time.Duration(i)*time.Minute)))
		if err := db.Store.SetEventStatus(ctx, db.Env, evs[i].ID, models.EventFailed); err != nil {
			t.Fatal(err)
		}
	}
	f := store.EventFilter{Status: models.EventFailed}
	old, err := db.Store.CreateReplayJob(ctx, db.Env, f, time.Now().Add(-10*time.Minute))
	if err != nil || old.Matched != 5 {
		t.Fatalf("job %+v, err %v", old, err)
	}
	// The dead owner had replayed the first two.
	if err := db.Store.AdvanceReplayJob(ctx, db.Env, old.ID, store.ReplayProgress{Replayed: 2, CursorAt: evs[1].CreatedAt, CursorID: evs[1].ID}, time.Now().Add(-5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	fresh, err := db.Store.CreateReplayJob(ctx, db.Env, f, time.Now())
	if err != nil {
		t.Fatal(err)
	}

	st := &dispatcher{}
	svc := &replay.Service{Store: db.Store, Dispatch: st, StaleAfter: time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n, err := svc.ResumeStale(ctx)
	if err != nil || n != 1 {
		t.Fatalf("resumed %d (err %v), want 1", n, err)
	}
	svc.Wait()
	if n, _ := svc.ResumeStale(ctx); n != 0 {
		t.Fatalf("a finished job was resumed again (%d)", n)
	}
	got, err := db.Store.ReplayJob(ctx, db.Env, old.ID)
	if err != nil || got.Status != models.ReplayJobDone || got.Replayed != 5 || got.Failed != 0 {
		t.Fatalf("resumed job = %+v (err %v)", got, err)
	}
	slices.Sort(st.ids)
	want := []string{evs[2].ID, evs[3].ID, evs[4].ID}
	slices.Sort(want)
	if !slices.Equal(st.ids, want) {
		t.Fatalf("replayed %v, want the last three events %v", st.ids, want)
	}
	if j, _ := db.Store.ReplayJob(ctx, db.Env, fresh.ID); j.Status != models.ReplayJobRunning || j.Replayed != 0 {
		t.Fatalf("a job with a live owner was taken: %+v", j)
	}
}

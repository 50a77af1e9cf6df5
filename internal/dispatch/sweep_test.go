package dispatch_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// outboxRows stands for the events table as the sweeper reads it: the undispatched
// events, oldest first.
type outboxRows struct {
	dispatch.StarterStore
	mu     sync.Mutex
	events []models.Event
	marked map[string]bool
	lists  int
}

func (r *outboxRows) UndispatchedEvents(_ context.Context, _ time.Time, limit int) ([]models.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists++
	var out []models.Event
	for _, e := range r.events {
		if !r.marked[e.ID] && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (r *outboxRows) EventsToRedispatch(context.Context, time.Time, int) ([]models.Event, error) {
	return nil, nil
}

func (r *outboxRows) MarkDispatched(_ context.Context, _ models.Env, eventID, _, _ string, _ time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marked[eventID] = true
	return nil
}

func (r *outboxRows) EventDeliveries(context.Context, models.Env, string) ([]models.WebhookDelivery, error) {
	return nil, nil
}

func (r *outboxRows) AllWebhookEndpoints(context.Context, models.Env) ([]models.WebhookEndpoint, error) {
	return nil, nil
}

func (r *outboxRows) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.marked)
}

// CONTRACT §17 for the sweeper (issue 41 finding 5): the oldest five events of the outbox
// always fail to start, ahead of 245 of other environments. The first sweep stops after
// three first failures in a row (Temporal may be away), setting them aside; the next
// passes over them (set aside), sets the other two aside, and starts all 245 behind them
// — more than one list's worth: each list asks for as many more rows as it passed over.
// While set aside the five are not tried; after their time each is tried again, and a
// failure of a start known to fail does not stop the sweep.
func TestSweepPassesOverStartsThatFail(t *testing.T) {
	ctx := context.Background()
	rows := &outboxRows{marked: map[string]bool{}}
	broken := map[string]bool{}
	for i := range 250 {
		e := models.Event{ID: fmt.Sprintf("ev-%04d", i), EnvironmentID: fmt.Sprintf("env-%d", i%7), OrganizationID: "org"}
		if i < 5 {
			e.EnvironmentID = "env-bad"
			broken[wire.WorkflowID(e.ID)] = true
		}
		rows.events = append(rows.events, e)
	}
	tc := &runsClient{broken: broken}
	clk := newClock()
	s := &dispatch.Starter{Client: tc, Store: rows, SweepAge: time.Nanosecond}
	s.SetClock(clk.Now)
	tries := func() (n int) {
		for i := range 5 {
			n += tc.triesOf(fmt.Sprintf("ev-%04d", i))
		}
		return n
	}

	if n, err := s.Sweep(ctx); n != 0 || err == nil || tries() != 3 {
		t.Fatalf("first sweep: %d started (%v), %d tries of the failing head; want none, an error, 3", n, err, tries())
	}
	if n, err := s.Sweep(ctx); n != 245 || err != nil || tries() != 5 || rows.count() != 245 {
		t.Fatalf("second sweep: %d started (%v), %d marked, %d tries of the failing head; want 245, no error, 5", n, err, rows.count(), tries())
	}
	if n, err := s.Sweep(ctx); n != 0 || err != nil || tries() != 5 {
		t.Fatalf("while set aside: %d started (%v), %d tries of the failing head, want 5", n, err, tries())
	}
	clk.Add(time.Second)
	if n, err := s.Sweep(ctx); n != 0 || err != nil || tries() != 10 {
		t.Fatalf("after their time: %d started (%v), %d tries of the failing head, want all five tried again (10)", n, err, tries())
	}
}

// A batch handed to Dispatch (the start queue's, a bulk replay page's): a start that
// fails fails only itself, the others of the batch start; while set aside it is left to
// the sweeper, not tried again by the next batches that carry it.
func TestDispatchPassesOverAStartThatFails(t *testing.T) {
	ctx := context.Background()
	rows := &outboxRows{marked: map[string]bool{}}
	var events []models.Event
	for i := range 4 {
		events = append(events, models.Event{ID: fmt.Sprintf("ev-%d", i), EnvironmentID: "env-1", OrganizationID: "org", Fanout: &models.Fanout{}})
	}
	tc := &runsClient{broken: map[string]bool{wire.WorkflowID("ev-1"): true}}
	s := &dispatch.Starter{Client: tc, Store: rows}
	s.SetClock(newClock().Now)
	s.Dispatch(ctx, events)
	if rows.count() != 3 || rows.marked["ev-1"] || tc.triesOf("ev-1") != 1 {
		t.Fatalf("%d of the 3 others started; the failing one marked %v, tried %d times", rows.count(), rows.marked["ev-1"], tc.triesOf("ev-1"))
	}
	s.Dispatch(ctx, events[1:2])
	if tc.triesOf("ev-1") != 1 {
		t.Fatalf("the start set aside was tried again (%d tries)", tc.triesOf("ev-1"))
	}
}

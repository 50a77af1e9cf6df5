package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/clocktest"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// claimRows stands for the events table as claims see it (the SQL is tested in
// internal/store; this follows it): up to envs environments with events not held, the
// first after `after` and on round to the first ones, each giving its share of limit;
// the next turn after the last one taken when the claim took as many as it could, else
// after its first.
type claimRows struct {
	mu      sync.Mutex
	events  []models.Event
	started map[string]string // event id → run id
	claims  int
	firsts  []string // the first environment of each claim
}

func (r *claimRows) ClaimStarts(ctx context.Context, q store.StartQuery, start func(context.Context, []models.Event) []store.Started) (store.StartClaim, error) {
	r.mu.Lock()
	r.claims++
	waiting := map[string][]models.Event{}
	for _, e := range r.events {
		if _, ok := r.started[e.ID]; !ok && !slices.Contains(q.Held[:min(len(q.Held), store.MaxHeld)], e.ID) {
			waiting[e.EnvironmentID] = append(waiting[e.EnvironmentID], e)
		}
	}
	envs := slices.Sorted(maps.Keys(waiting))
	i, _ := slices.BinarySearch(envs, q.After+"\x00")
	picked := append(slices.Clone(envs[i:]), envs[:i]...)
	picked = picked[:min(len(picked), q.Envs)]
	c := store.StartClaim{Next: q.After}
	for _, env := range picked {
		evs, share := waiting[env], max(1, q.Limit/len(picked))
		c.Events = append(c.Events, evs[:min(len(evs), share)]...)
		c.More = c.More || len(evs) >= share
	}
	switch {
	case len(picked) == q.Envs:
		c.Next, c.More = picked[len(picked)-1], true
	case len(picked) > 0:
		c.Next = picked[0]
		r.firsts = append(r.firsts, picked[0])
	}
	r.mu.Unlock()
	if len(c.Events) > 0 {
		for _, s := range start(ctx, c.Events) {
			r.mu.Lock()
			r.started[s.EventID] = s.RunID
			r.mu.Unlock()
		}
	}
	return c, nil
}

func (r *claimRows) ListenOutbox(ctx context.Context, _ func()) error {
	<-ctx.Done()
	return nil
}

func (r *claimRows) EventsToRedispatch(context.Context, time.Time, int) ([]models.Event, error) {
	return nil, nil
}

func (r *claimRows) count() (started, claims int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.started), r.claims
}

// runsClient starts delivery runs, failing those of the events in fail once each and
// those in broken every time; it counts the starts asked for each workflow.
type runsClient struct {
	client.Client
	mu     sync.Mutex
	fail   map[string]bool
	broken map[string]bool
	tries  map[string]int
}

type run struct {
	client.WorkflowRun
	id string
}

func (r run) GetRunID() string { return r.id }

func (c *runsClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, _ ...any) (client.WorkflowRun, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if wf != wire.WorkflowName || !opts.EnableEagerStart {
		return nil, errors.New("not an eager start of the delivery workflow")
	}
	if c.tries == nil {
		c.tries = map[string]int{}
	}
	c.tries[opts.ID]++
	if c.fail[opts.ID] || c.broken[opts.ID] {
		delete(c.fail, opts.ID)
		return nil, errors.New("Temporal said no")
	}
	return run{id: "run-" + opts.ID}, nil
}

func (c *runsClient) triesOf(eventID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tries[wire.WorkflowID(eventID)]
}

// One wake drains the outbox claim after claim, environments in turn, until nothing is
// left — through more environments than one claim takes, and past the last one back to
// the first; a start that fails is set aside and the drain goes on without it; the drain
// after its time starts it.
func TestClaimerDrainsTheOutbox(t *testing.T) {
	rows := &claimRows{started: map[string]string{}}
	add := func(n int, env func(i int) string) {
		rows.mu.Lock()
		defer rows.mu.Unlock()
		for i := range n {
			id := fmt.Sprintf("ev-%04d", len(rows.events))
			rows.events = append(rows.events, models.Event{ID: id, EnvironmentID: env(i), OrganizationID: "org", Fanout: &models.Fanout{}})
		}
	}
	// 20 environments of 10 events (more than the 16 a claim takes), and one of 150.
	add(200, func(i int) string { return fmt.Sprintf("env-%02d", i%20) })
	add(150, func(int) string { return "env-99" })
	tc := &runsClient{fail: map[string]bool{}}
	clk := newClock()
	starter := &dispatch.Starter{Client: tc}
	starter.SetClock(clk.Now)
	c := &dispatch.Claimer{Starter: starter, Store: rows}
	ctx := context.Background()

	c.DrainForTest(ctx)
	started, claims := rows.count()
	if started != 350 {
		t.Fatalf("one drain started %d of 350 events in %d claims", started, claims)
	}
	if claims > 20 {
		t.Errorf("350 events in %d claims of up to 64", claims)
	}
	for _, e := range rows.events {
		if rows.started[e.ID] != "run-"+wire.WorkflowID(e.ID) {
			t.Fatalf("event %s marked with run %q", e.ID, rows.started[e.ID])
		}
	}

	// A failed start fails only itself: the drain starts the others, the event stays
	// owed, set aside; the drain after its time starts it.
	add(100, func(int) string { return "env-05" })
	tc.mu.Lock()
	tc.fail[wire.WorkflowID("ev-0350")] = true
	tc.mu.Unlock()
	c.DrainForTest(ctx)
	if started, _ := rows.count(); started != 449 || rows.started["ev-0350"] != "" {
		t.Fatalf("after a failed start: %d of 450 started, the failed one %q", started, rows.started["ev-0350"])
	}
	c.DrainForTest(ctx)
	if started, _ := rows.count(); started != 449 || tc.triesOf("ev-0350") != 1 {
		t.Fatalf("the failed start was tried again before its time (%d tries)", tc.triesOf("ev-0350"))
	}
	clk.Add(time.Second)
	c.DrainForTest(ctx)
	if started, _ := rows.count(); started != 450 {
		t.Fatalf("the drain after its time left %d of 450 unstarted", 450-started)
	}
}

// newClock is a starter's set-aside clock, moved by the test.
func newClock() *clocktest.Manual {
	return clocktest.NewManual(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
}

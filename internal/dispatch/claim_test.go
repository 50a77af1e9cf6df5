package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
)

// claimRows stands for the events table as claims see it (the SQL is tested in
// internal/store; this follows it): up to envs environments with events after `after`,
// each giving its share of limit, the next turn after the last one served, and from the
// first again once past the last.
type claimRows struct {
	mu      sync.Mutex
	events  []models.Event
	started map[string]string // event id → run id
	claims  int
}

func (r *claimRows) ClaimStarts(ctx context.Context, after string, envs, limit int, start func(context.Context, []models.Event) []store.Started) (store.StartClaim, error) {
	r.mu.Lock()
	r.claims++
	waiting := map[string][]models.Event{}
	for _, e := range r.events {
		if _, ok := r.started[e.ID]; !ok {
			waiting[e.EnvironmentID] = append(waiting[e.EnvironmentID], e)
		}
	}
	var picked []string
	for env := range waiting {
		if env > after {
			picked = append(picked, env)
		}
	}
	slices.Sort(picked)
	picked = picked[:min(len(picked), envs)]
	var c store.StartClaim
	for _, env := range picked {
		evs := waiting[env]
		c.Events = append(c.Events, evs[:min(len(evs), max(1, limit/len(picked)))]...)
		c.More = c.More || len(evs) >= max(1, limit/envs)
	}
	switch {
	case len(picked) == envs:
		c.Next, c.More = picked[len(picked)-1], true
	case after != "":
		c.More = true // past the last environment: the next turn starts from the first
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

// runsClient starts delivery runs, failing those of the events in fail once each.
type runsClient struct {
	client.Client
	mu   sync.Mutex
	fail map[string]bool
}

type run struct {
	client.WorkflowRun
	id string
}

func (r run) GetRunID() string { return r.id }

func (c *runsClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, _ ...any) (client.WorkflowRun, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if wf != workflows.WorkflowName || !opts.EnableEagerStart {
		return nil, errors.New("not an eager start of the delivery workflow")
	}
	if c.fail[opts.ID] {
		delete(c.fail, opts.ID)
		return nil, errors.New("Temporal said no")
	}
	return run{id: "run-" + opts.ID}, nil
}

// One wake drains the outbox claim after claim, environments in turn, until nothing is
// left — through more environments than one claim takes, and past the last one back to
// the first — and stops at a claim whose start failed (claiming again at once would only
// find that event again); the next wake takes what is left.
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
	c := &dispatch.Claimer{Starter: &dispatch.Starter{Client: tc}, Store: rows}
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
		if rows.started[e.ID] != "run-"+workflows.WorkflowID(e.ID) {
			t.Fatalf("event %s marked with run %q", e.ID, rows.started[e.ID])
		}
	}

	// A failed start: the drain stops, the event stays owed, the next drain starts it.
	add(100, func(int) string { return "env-05" })
	tc.mu.Lock()
	tc.fail[workflows.WorkflowID("ev-0350")] = true
	tc.mu.Unlock()
	c.DrainForTest(ctx)
	if started, after := rows.count(); after != claims+1 || started == 450 {
		t.Fatalf("after a failed start: %d claims (want 1), %d of 450 started", after-claims, started)
	}
	c.DrainForTest(ctx)
	if started, _ := rows.count(); started != 450 {
		t.Fatalf("the next drain left %d of 450 unstarted", 450-started)
	}
}

package dispatch_test

import (
	"context"
	"errors"
	"fmt"
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
// internal/store): each claim takes up to limit events shared by the environments with
// events, and marks those started.
type claimRows struct {
	mu      sync.Mutex
	events  []models.Event
	started map[string]string // event id → run id
	claims  int
}

func (r *claimRows) ClaimStarts(ctx context.Context, _ string, _, limit int, start func(context.Context, []models.Event) []store.Started) (store.StartClaim, error) {
	r.mu.Lock()
	r.claims++
	envs := map[string]int{}
	for _, e := range r.events {
		if _, ok := r.started[e.ID]; !ok {
			envs[e.EnvironmentID]++
		}
	}
	var c store.StartClaim
	if len(envs) == 0 {
		r.mu.Unlock()
		return c, nil
	}
	per := limit / len(envs)
	took := map[string]int{}
	for _, e := range r.events {
		if _, ok := r.started[e.ID]; !ok && took[e.EnvironmentID] < per {
			took[e.EnvironmentID]++
			c.Events = append(c.Events, e)
			c.More = c.More || took[e.EnvironmentID] == per
		}
	}
	r.mu.Unlock()
	for _, s := range start(ctx, c.Events) {
		r.mu.Lock()
		r.started[s.EventID] = s.RunID
		r.mu.Unlock()
	}
	return c, nil
}

func (r *claimRows) ListenOutbox(ctx context.Context, _ time.Duration, _ func(string)) error {
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

// One wake drains the outbox claim after claim while a claim says more may be left, and
// stops at a claim whose start failed (claiming again at once would only find that event
// again); the next wake (a poll) takes what is left.
func TestClaimerDrainsTheOutbox(t *testing.T) {
	rows := &claimRows{started: map[string]string{}}
	for i := range 150 {
		env := "env-a"
		if i%10 == 0 {
			env = "env-b"
		}
		rows.events = append(rows.events, models.Event{ID: fmt.Sprintf("ev-%03d", i), EnvironmentID: env, OrganizationID: "org", Fanout: &models.Fanout{}})
	}
	tc := &runsClient{fail: map[string]bool{}}
	c := &dispatch.Claimer{Starter: &dispatch.Starter{Client: tc}, Store: rows, Poll: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	c.Wake()
	waitUntil(t, func() bool { started, _ := rows.count(); return started == 150 })
	if _, claims := rows.count(); claims < 3 {
		t.Errorf("150 events in %d claims of at most 64", claims)
	}
	for _, e := range rows.events {
		if rows.started[e.ID] != "run-"+workflows.WorkflowID(e.ID) {
			t.Fatalf("event %s marked with run %q", e.ID, rows.started[e.ID])
		}
	}

	// A failed start: the drain stops, the event stays owed, the next wake starts it.
	more := len(rows.events)
	for i := range 100 {
		rows.mu.Lock()
		rows.events = append(rows.events, models.Event{ID: fmt.Sprintf("ev-%03d", more+i), EnvironmentID: "env-a", OrganizationID: "org", Fanout: &models.Fanout{}})
		rows.mu.Unlock()
	}
	tc.mu.Lock()
	tc.fail[workflows.WorkflowID(fmt.Sprintf("ev-%03d", more))] = true
	tc.mu.Unlock()
	_, before := rows.count()
	c.Wake()
	waitUntil(t, func() bool { started, claims := rows.count(); return claims > before && started == 150+63 })
	time.Sleep(50 * time.Millisecond) // a drain that went on would claim again here
	if started, claims := rows.count(); claims != before+1 || started != 213 {
		t.Fatalf("after a failed start: %d claims (want 1), %d started (want 213)", claims-before, started)
	}
	c.Wake()
	waitUntil(t, func() bool { started, _ := rows.count(); return started == 250 })
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

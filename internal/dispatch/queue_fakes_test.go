package dispatch_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// fakeOutbox is the events table as the Queue sees it: the events committed, in commit
// order, those not started yet listed by PendingStarts.
type fakeOutbox struct {
	mu      sync.Mutex
	events  []models.Event
	started map[string]bool
	reads   int
}

func newFakeOutbox() *fakeOutbox { return &fakeOutbox{started: map[string]bool{}} }

// commit writes one change's events (n of them) of env and returns them.
func (o *fakeOutbox) commit(env string, n int) []models.Event {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := time.Unix(0, 0).Add(time.Duration(len(o.events)) * time.Microsecond)
	var evs []models.Event
	for i := range n {
		evs = append(evs, models.Event{ID: fmt.Sprintf("%s-%05d", env, len(o.events)+i), OrganizationID: "org-" + env,
			EnvironmentID: env, Environment: models.EnvSandbox, Seq: int64(i + 1), CreatedAt: at})
	}
	o.events = append(o.events, evs...)
	return evs
}

// markStarted is what a start does to the table (MarkDispatched).
func (o *fakeOutbox) markStarted(events []models.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range events {
		o.started[e.ID] = true
	}
}

func (o *fakeOutbox) PendingStarts(_ context.Context, env models.Env, limit int) ([]models.Event, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reads++
	var out []models.Event
	for _, e := range o.events {
		if len(out) == limit {
			break
		}
		if e.EnvironmentID == env.ID && !o.started[e.ID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// recorder is the next Dispatcher: it records every event handed over, in order, and
// marks it started in the outbox after waiting for gate when there is one. It stops at
// the first start that fails (as Starter does when Temporal is away): every one while
// failing, or those in fails.
type recorder struct {
	outbox  *fakeOutbox
	gate    chan struct{}
	failing bool
	fails   map[string]bool
	mu      sync.Mutex
	got     []string
}

func (r *recorder) Dispatch(ctx context.Context, events []models.Event) {
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			return
		}
	}
	r.mu.Lock()
	for _, e := range events {
		r.got = append(r.got, e.ID)
	}
	r.mu.Unlock()
	for i, e := range events {
		if r.failing || r.fails[e.ID] {
			events = events[:i]
			break
		}
	}
	r.outbox.markStarted(events)
}

func (r *recorder) handed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// idle waits for q.Idle, failing the test after a while (the old Queue, which left an
// overflow to the sweeper, never hands it over).
func idle(t *testing.T, q interface{ Idle() }) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		q.Idle()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the queue is not idle after 30 s")
	}
}

// ids are the events' ids.
func ids(events []models.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

// call is one batch a gated Dispatcher holds until it is released.
type call struct {
	env     string
	release chan struct{}
}

// gated holds every batch handed over until the test releases it, and tells the test
// of each on calls.
type gated struct{ calls chan call }

func (g gated) Dispatch(ctx context.Context, events []models.Event) {
	c := call{env: events[0].EnvironmentID, release: make(chan struct{})}
	g.calls <- c
	select {
	case <-c.release:
	case <-ctx.Done():
	}
}

// next is the next batch handed over, failing the test after a while.
func (g gated) next(t *testing.T) call {
	t.Helper()
	select {
	case c := <-g.calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no batch handed over within 10 s")
		return call{}
	}
}

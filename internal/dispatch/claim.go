package dispatch

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
)

// ClaimStore is what a Claimer needs of the database (PostgreSQL: store.Store).
type ClaimStore interface {
	ClaimStarts(ctx context.Context, after string, envs, limit int, start func(context.Context, []models.Event) []store.Started) (store.StartClaim, error)
	ListenOutbox(ctx context.Context, retry time.Duration, wake func(payload string)) error
	EventsToRedispatch(ctx context.Context, before time.Time, limit int) ([]models.Event, error)
}

var _ ClaimStore = (*store.Store)(nil)

// Bounds of a claim: environments taken in one turn of the round robin, events in one
// claim (shared between them), and starts made at once.
const (
	claimEnvironments = 16
	claimEvents       = 64
	claimStarts       = 32
)

// Claimer starts the workflows of committed events from the outbox, in a process that runs
// a worker for revops-webhooks (CONTRACT §22): its starts are eager, so a delivery's first
// workflow task and first attempt skip the trip through matching while the worker has a
// free slot. It is woken by Dispatch (a change committed in this process), by an outbox
// notification (committed in a process that does not start runs: Notifier), and every
// Poll; it then claims events in batches, environments in turn, until none is left.
// Replays committed elsewhere are reached the same way. Any number of processes claim
// side by side: a claim locks its events (SKIP LOCKED), and marks them dispatched in the
// same transaction.
type Claimer struct {
	Starter *Starter
	Store   ClaimStore
	Poll    time.Duration // default 1s

	once   sync.Once
	wake   chan struct{}
	cursor string // the environment the last claim ended with
	// replays is set when a replay committed since the last look: the claimer then looks
	// for replayed events too (else only at its poll).
	replays atomic.Bool
}

// replayPayload is the outbox notification of a replay (a Notifier's, ListenOutbox's).
const replayPayload = "replay"

func (c *Claimer) init() { c.once.Do(func() { c.wake = make(chan struct{}, 1) }) }

// Dispatch wakes the claimer: the events have committed, and the claim will find them
// (with those of every other process).
func (c *Claimer) Dispatch(_ context.Context, events []models.Event) {
	if hasReplay(events) {
		c.replays.Store(true)
	}
	c.Wake()
}

// notified wakes the claimer for an outbox notification.
func (c *Claimer) notified(payload string) {
	if payload != "" { // a replay, or a listener that may have missed one
		c.replays.Store(true)
	}
	c.Wake()
}

func hasReplay(events []models.Event) bool {
	for _, e := range events {
		if e.RedispatchAt != nil {
			return true
		}
	}
	return false
}

// Wake has the claimer claim again as soon as it is free.
func (c *Claimer) Wake() {
	c.init()
	select {
	case c.wake <- struct{}{}:
	default: // a wake is pending already: it will see these events too
	}
}

// Run claims until ctx ends.
func (c *Claimer) Run(ctx context.Context) {
	c.init()
	go func() { _ = c.Store.ListenOutbox(ctx, orDefault(c.Poll, time.Second), c.notified) }()
	t := time.NewTicker(orDefault(c.Poll, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-t.C:
			c.replays.Store(true) // the poll looks at everything
		}
		if c.Starter.reachable() {
			c.drain(ctx)
		}
	}
}

// drain claims until a claim says nothing is left, then reaches the replayed events if a
// replay may be waiting.
func (c *Claimer) drain(ctx context.Context) {
	for ctx.Err() == nil {
		more, err := c.claim(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.Starter.log().Warn("outbox claim failed; retrying at the next poll", "err", err)
			}
			return
		}
		if !more {
			break
		}
	}
	if !c.replays.Swap(false) {
		return
	}
	if _, err := sweepBatches(ctx, 0, c.Store.EventsToRedispatch, c.Starter.Redispatch); err != nil && ctx.Err() == nil {
		c.Starter.log().Warn("replays not reached; retrying at the next poll", "err", err)
	}
}

// claim takes one batch and starts its runs; it says whether events may be left.
func (c *Claimer) claim(ctx context.Context) (bool, error) {
	started := 0
	claim, err := c.Store.ClaimStarts(ctx, c.cursor, claimEnvironments, claimEvents, func(ctx context.Context, evs []models.Event) []store.Started {
		s := c.startAll(ctx, evs)
		started = len(s)
		return s
	})
	if err != nil {
		return false, err
	}
	if claim.Next != "" {
		c.cursor = claim.Next
	}
	// A start that failed stops the drain: claiming again at once would find the same
	// event, and the next poll retries it.
	return claim.More && started == len(claim.Events), nil
}

// startAll starts the events' runs, claimStarts at once, and returns those started.
func (c *Claimer) startAll(ctx context.Context, events []models.Event) []store.Started {
	var (
		mu      sync.Mutex
		started []store.Started
		wg      sync.WaitGroup
		slots   = make(chan struct{}, claimStarts)
		failed  error
	)
	for _, e := range events {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			runID, err := c.Starter.launch(ctx, e)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = err
				return
			}
			started = append(started, store.Started{EventID: e.ID, WorkflowID: workflows.WorkflowID(e.ID), RunID: runID})
		}()
	}
	wg.Wait()
	if failed != nil {
		c.Starter.log().Warn("webhook deliveries not started; the next claim retries them",
			"not_started", len(events)-len(started), "err", failed)
	}
	return started
}

// Notifier is the Dispatcher of a process that commits changes but runs no claimer (`revops
// api` on PostgreSQL): it wakes the claimers of the worker processes with one outbox
// notification per Every at most (default 50 ms), sent after commit, outside every
// change's transaction. A notification lost on the way costs at most the claimers' poll.
type Notifier struct {
	Store interface {
		NotifyOutbox(ctx context.Context, payload string) error
	}
	Every time.Duration

	once    sync.Once
	kick    chan struct{}
	replays atomic.Bool // a replay is among the events the next notification is for
}

func (n *Notifier) init() { n.once.Do(func() { n.kick = make(chan struct{}, 1) }) }

// Dispatch asks for a notification and returns at once.
func (n *Notifier) Dispatch(_ context.Context, events []models.Event) {
	n.init()
	if hasReplay(events) {
		n.replays.Store(true)
	}
	select {
	case n.kick <- struct{}{}:
	default: // one is due already
	}
}

// Run sends the notifications asked for until ctx ends, at most one per Every: the events
// committed meanwhile ride on the next one.
func (n *Notifier) Run(ctx context.Context) {
	n.init()
	every := orDefault(n.Every, 50*time.Millisecond)
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		}
		sendCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		payload := ""
		if n.replays.Swap(false) {
			payload = replayPayload
		}
		_ = n.Store.NotifyOutbox(sendCtx, payload) // lost: the claimers' poll finds the events
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

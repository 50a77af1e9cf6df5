package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// ClaimStore is what a Claimer needs of the database (PostgreSQL: store.Store).
type ClaimStore interface {
	ClaimStarts(ctx context.Context, q store.StartQuery, start func(context.Context, []models.Event) []store.Started) (store.StartClaim, error)
	ListenOutbox(ctx context.Context, wake func()) error
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
// free slot. It is woken by Wake (a change committed in this process: Wakes), by an outbox
// notification (committed in a process that does not start runs: Notifier), and every
// Poll; it then claims events in batches, environments in turn, until none is left. Any
// number of processes claim side by side: a claim takes its events exclusively, and marks
// them dispatched in the same transaction. Replays are reached by the process that
// committed them (Outboxed); the poll reaches those it missed, as the sweeper did.
type Claimer struct {
	Starter *Starter
	Store   ClaimStore
	Poll    time.Duration // default 1s

	once   sync.Once
	wake   chan struct{}
	cursor string // where the round robin goes on ("": from the first environment)
	// failing is set while claims fail (logged when it starts and when it ends).
	failing bool
}

func (c *Claimer) init() { c.once.Do(func() { c.wake = make(chan struct{}, 1) }) }

// Wakes is the Dispatcher of a process that runs a Claimer: it only wakes it (Wake). The
// events have committed, and the claim will find them (with those of every other
// process).
type Wakes func()

// Dispatch wakes.
func (w Wakes) Dispatch(context.Context, []models.Event) { w() }

// Wake has the claimer claim again as soon as it is free.
func (c *Claimer) Wake() {
	c.init()
	select {
	case c.wake <- struct{}{}:
	default: // a wake is pending already: it will see these events too
	}
}

// Run claims until ctx ends, and returns once its listener has stopped too.
func (c *Claimer) Run(ctx context.Context) {
	c.init()
	poll := orDefault(c.Poll, time.Second)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.listen(ctx, poll)
	}()
	defer wg.Wait()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		tick := false
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-t.C:
			tick = true
		}
		if !c.Starter.reachable() {
			continue
		}
		c.drain(ctx)
		if tick {
			c.sweepReplays(ctx)
		}
	}
}

// listen wakes the claimer at every outbox notification, reconnecting after a lost
// connection every poll (the poll covers the gap); a streak of failures is logged when it
// starts and when it ends.
func (c *Claimer) listen(ctx context.Context, retry time.Duration) {
	failing := false
	for ctx.Err() == nil {
		err := c.Store.ListenOutbox(ctx, func() {
			if failing {
				failing = false
				c.Starter.log().Info("outbox notifications received again")
			}
			c.Wake()
		})
		if ctx.Err() != nil {
			return
		}
		if !failing {
			failing = true
			c.Starter.log().Warn("outbox notifications lost; starts wait for the poll until they return", "every", retry, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}

// drain claims until a claim says nothing is left or none of its starts succeeded.
func (c *Claimer) drain(ctx context.Context) {
	for ctx.Err() == nil {
		more, err := c.claim(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !c.failing:
			c.failing = true
			c.Starter.log().Warn("webhook deliveries not started; retrying at every poll", "err", err)
		case err != nil:
			c.Starter.log().Debug("webhook deliveries not started", "err", err)
		case c.failing:
			c.failing = false
			c.Starter.log().Info("webhook deliveries start again")
		}
		if err != nil || !more {
			return
		}
	}
}

// sweepReplays reaches the workflow of the events replayed more than the sweeper's age
// ago whose committing process did not (it died, or Temporal was away).
func (c *Claimer) sweepReplays(ctx context.Context) {
	age := orDefault(c.Starter.SweepAge, 5*time.Second)
	if _, err := c.Starter.eventSweep(age, c.Store.EventsToRedispatch, c.Starter.Redispatch).run(ctx); err != nil && ctx.Err() == nil {
		c.Starter.log().Debug("replays not reached; retrying at the next poll", "err", err)
	}
}

// claim takes one batch and starts its runs; it says whether events may be left (never
// when it started none: the next claim would find the same events). Its error says
// that none of its starts succeeded and some failed for the first time (Temporal is
// likely away): the drain stops, and the next poll claims again.
func (c *Claimer) claim(ctx context.Context) (bool, error) {
	var out claimOutcome
	q := store.StartQuery{After: c.cursor, Envs: claimEnvironments, Limit: claimEvents, Held: c.Starter.holds.heldNow(store.MaxHeld)}
	claim, err := c.Store.ClaimStarts(ctx, q, func(ctx context.Context, evs []models.Event) []store.Started {
		out = c.startAll(ctx, evs)
		return out.started
	})
	if err != nil {
		return false, err
	}
	// The round robin goes on after this claim, whatever its starts did: a start that
	// failed is set aside (holds) and left out of the next claims until its time, so
	// claiming again at once finds the others.
	c.cursor = claim.Next
	switch {
	case len(out.started) > 0:
		return claim.More, nil
	case out.news > 0:
		return false, out.lastErr
	default: // only starts set aside, or known to fail: claiming again at once finds them
		return false, nil
	}
}

// Outboxed is the Dispatcher of a process on PostgreSQL: its new events go to the outbox
// path (a Claimer of its own, or a Notifier that wakes the workers'), its replays to the
// queue that reaches their workflows at once (SignalWithStart is never eager, so there is
// nothing to gain from a worker's start, and one process reaching each replay sends it
// once).
type Outboxed struct {
	New, Replays Dispatcher
}

// Dispatch hands each event to its path.
func (o Outboxed) Dispatch(ctx context.Context, events []models.Event) {
	var fresh, replayed []models.Event
	for _, e := range events {
		if e.RedispatchAt != nil {
			replayed = append(replayed, e)
		} else {
			fresh = append(fresh, e)
		}
	}
	if len(fresh) > 0 {
		o.New.Dispatch(ctx, fresh)
	}
	if len(replayed) > 0 {
		o.Replays.Dispatch(ctx, replayed)
	}
}

// Notifier is the Dispatcher of a process that commits changes but runs no claimer (`revops
// api` on PostgreSQL): it wakes the claimers of the worker processes with one outbox
// notification per Every at most (default 50 ms), sent after commit, outside every
// change's transaction. A notification lost on the way costs at most the claimers' poll.
type Notifier struct {
	Store interface {
		NotifyOutbox(ctx context.Context) error
	}
	Every time.Duration

	once sync.Once
	kick chan struct{}
}

func (n *Notifier) init() { n.once.Do(func() { n.kick = make(chan struct{}, 1) }) }

// Dispatch asks for a notification and returns at once.
func (n *Notifier) Dispatch(context.Context, []models.Event) {
	n.init()
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
		_ = n.Store.NotifyOutbox(sendCtx) // lost: the claimers' poll finds the events
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

package dispatch

import (
	"context"
	"log/slog"
	"sync"

	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Dispatcher starts the delivery of events right after the change that made them has
// committed, or reaches the workflow of replayed ones. It logs its own failures: the
// sweeper starts whatever it could not. Starter is one (it may block: it talks to
// Temporal); Queue is the one the API and its replays use, which never blocks.
type Dispatcher interface {
	Dispatch(ctx context.Context, events []models.Event)
}

// Outbox is what a Queue reads back of the database when an environment overflowed its
// part of the queue: the environment's events still owed a start, oldest first
// (store.PendingStarts).
type Outbox interface {
	PendingStarts(ctx context.Context, env models.Env, limit int) ([]models.Event, error)
}

var _ Outbox = (*store.Store)(nil)

// Bounds of a Queue. A batch is the events of one change, all of one environment. A
// start waits on Temporal (and, with eager start, runs the first workflow task here),
// so starts run side by side, as they did when each request made its own: up to
// dispatchWorkers at once, goroutines that end when nothing is left to take. Each
// environment queues up to envQueueEvents events in memory and all together up to
// queueEvents; beyond that an environment's events wait in the outbox, from which the
// Queue takes them back as soon as there is room (refill.go).
const (
	dispatchWorkers = 32
	envQueueEvents  = 1024
	queueEvents     = 4096
)

// Queue keeps the start of workflows off the request path (CONTRACT §10: a response
// never waits for Temporal) and fair across environments (CONTRACT §17, "Starts under
// bursts"). Dispatch queues the committed events in their environment's FIFO and returns
// at once; goroutines, started on demand and gone when nothing is left to take, hand
// them to the underlying Dispatcher, taking the environments with work in turn, none
// holding more than its share of the goroutines (fair.go). An environment whose FIFO is
// full overflows: its new events stay in the outbox, and the Queue reads them back,
// oldest first, as soon as the FIFO has room (refill.go) — never waiting for the
// sweeper's period.
type Queue struct {
	next   Dispatcher
	outbox Outbox // nil: an overflow is left to the sweeper
	log    *slog.Logger
	limits queueLimits

	// stop is cancelled by Close: in-flight starts end and queued ones are dropped.
	stop   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	emptied *sync.Cond // signalled when the last worker or refill ends
	closed  bool
	// Environments with work (queued, in flight or overflowed), in turn order.
	envs     map[string]*envQueue
	turns    []*envQueue
	turn     int
	queued   int // events in every FIFO
	running  int // worker goroutines
	starting int // of which not yet holding a batch
	refills  int // refill goroutines
	// known are the events queued or in flight here, done the ones handed over lately:
	// neither is queued again (by a refill, or a late Dispatch of what a refill took).
	known map[string]struct{}
	done  recentSet
	// warned is set while a streak of overflows or drops is going on (logged once).
	overflowing, dropping bool
}

// queueLimits are a Queue's bounds (the constants above; tests choose smaller ones).
type queueLimits struct {
	workers, envEvents, events int
}

// dispatchItem is one batch: events of one environment, from one change or one refill.
type dispatchItem struct {
	ctx    context.Context // the request's, without its cancellation: values only
	events []models.Event
}

// NewQueue queues for next; overflow is read back from outbox (nil: it is left to the
// sweeper). Close it at shutdown.
func NewQueue(next Dispatcher, log *slog.Logger, outbox Outbox) *Queue {
	return newQueue(next, log, outbox, queueLimits{workers: dispatchWorkers, envEvents: envQueueEvents, events: queueEvents})
}

func newQueue(next Dispatcher, log *slog.Logger, outbox Outbox, limits queueLimits) *Queue {
	if log == nil {
		log = slog.Default()
	}
	stop, cancel := context.WithCancel(context.Background())
	q := &Queue{next: next, outbox: outbox, log: log, limits: limits, stop: stop, cancel: cancel,
		envs: map[string]*envQueue{}, known: map[string]struct{}{}, done: newRecentSet(4 * limits.events)}
	q.emptied = sync.NewCond(&q.mu)
	return q
}

// Dispatch queues the events and returns without waiting.
func (q *Queue) Dispatch(ctx context.Context, events []models.Event) {
	if len(events) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		q.drop(len(events), "shutting down")
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, batch := range byEnvironment(events) {
		q.enqueue(dispatchItem{ctx: ctx, events: batch})
	}
	q.spawn()
}

// enqueue puts a batch into its environment's FIFO, without the events already queued,
// in flight or just handed over here, or overflows the environment.
func (q *Queue) enqueue(it dispatchItem) {
	it.events = q.unseen(it.events)
	if len(it.events) == 0 {
		return
	}
	e := q.envQueue(store.EnvOf(it.events[0]))
	if e.overflowed || !q.fits(e, len(it.events)) {
		q.overflow(e, len(it.events))
		return
	}
	q.push(e, it)
}

// fits tells whether n more events fit the environment's FIFO and the Queue; a batch
// larger than an environment's part fits an empty FIFO.
func (q *Queue) fits(e *envQueue, n int) bool {
	if q.queued+n > q.limits.events {
		return false
	}
	return e.queued == 0 || e.queued+n <= q.limits.envEvents
}

// overflow leaves n events of the environment in the outbox, to be read back as soon as
// its FIFO has room; without an outbox they are left to the sweeper.
func (q *Queue) overflow(e *envQueue, n int) {
	if q.outbox == nil {
		q.drop(n, "queue full")
		q.forgetIfIdle(e)
		return
	}
	metrics.DispatchOverflowed(n)
	e.overflowed = true
	e.dropped++
	if !q.overflowing {
		q.overflowing = true
		q.log.Info("workflow start queue full for an environment; its events are read back from the outbox",
			"organization_id", e.env.OrganizationID, "environment", e.env.Name, "events", n)
	}
	q.kick(e)
}

// drop leaves n events to the outbox sweeper, counted and logged once per streak (the
// caller holds mu).
func (q *Queue) drop(n int, why string) {
	metrics.DispatchDropped(n)
	if !q.dropping {
		q.dropping = true
		q.log.Warn("workflow starts left to the outbox sweeper", "reason", why, "events", n)
	}
}

// spawn starts workers while there are batches that may start now and no worker is on
// its way to take them (the caller holds mu).
func (q *Queue) spawn() {
	for q.running < q.limits.workers && q.starting < q.startable() {
		q.running++
		q.starting++
		q.wg.Add(1)
		go q.work()
	}
}

// work takes batches in turn and ends when none may start now: the worker whose batch
// ends takes the next (checked under mu, so no batch is ever left without one).
func (q *Queue) work() {
	defer q.wg.Done()
	q.mu.Lock()
	q.starting--
	for {
		e, it, ok := q.take()
		if !ok {
			break
		}
		q.spawn() // for what this worker leaves: another environment's turn
		q.mu.Unlock()
		if q.stop.Err() != nil {
			q.mu.Lock()
			q.drop(len(it.events), "shutting down")
		} else {
			q.dispatch(it)
			q.mu.Lock()
		}
		q.finish(e, it)
	}
	q.running--
	q.signalIfIdle()
	q.mu.Unlock()
}

func (q *Queue) dispatch(it dispatchItem) {
	ctx, cancel := context.WithCancel(it.ctx)
	defer cancel()
	defer context.AfterFunc(q.stop, cancel)()
	q.next.Dispatch(ctx, it.events)
}

// signalIfIdle wakes Idle and Close when no goroutine of the Queue is left (mu held).
func (q *Queue) signalIfIdle() {
	if q.running == 0 && q.refills == 0 {
		q.emptied.Broadcast()
	}
}

// Close stops accepting events (and reading overflow back: the sweeper of this or the
// next process starts it) and waits until the queued ones are handed over or ctx ends;
// then it cancels the starts still in flight, drops what is left and waits for its
// goroutines.
func (q *Queue) Close(ctx context.Context) {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	done := make(chan struct{})
	go func() {
		q.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	q.cancel()
	<-done
}

// Idle waits until every batch queued so far, and every overflow read back from the
// outbox, has been handed over (tests).
func (q *Queue) Idle() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.running > 0 || q.refills > 0 {
		q.emptied.Wait()
	}
}

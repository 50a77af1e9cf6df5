package dispatch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/revops/revops/internal/metrics"
	"github.com/revops/revops/models"
)

// Dispatcher starts the delivery of events right after the change that made them has
// committed, or reaches the workflow of replayed ones. It logs its own failures: the
// sweeper starts whatever it could not. Starter is one (it may block: it talks to
// Temporal); Queue is the one the API and the replay service use, which never blocks.
type Dispatcher interface {
	Dispatch(ctx context.Context, events []models.Event)
}

// Bounds of a Queue. A batch is the events of one change. A start waits on
// Temporal (and, with eager start, runs the first workflow task here), so starts run
// side by side, as they did when each request made its own: up to dispatchWorkers at
// once, goroutines that end when the queue is empty. The queue only fills when Temporal
// is slow or away — then the outbox and the sweeper take over, and dropping is safe.
const (
	dispatchQueueSize = 1024
	dispatchWorkers   = 32
)

// Queue keeps the start of workflows off the request path (CONTRACT §10: a
// response never waits for Temporal): Dispatch queues the committed events and returns
// at once; a few goroutines, started on demand and gone when the queue is empty, hand
// them to the underlying Dispatcher. A full queue drops, counted and logged once per
// streak: the events stay undispatched in the outbox and the sweeper starts them.
type Queue struct {
	next  Dispatcher
	log   *slog.Logger
	items chan dispatchItem

	// stop is cancelled by Close: in-flight starts end and queued ones are dropped.
	stop     context.Context
	cancel   context.CancelFunc
	mu       sync.Mutex
	emptied  *sync.Cond // signalled when the last worker ends
	running  int
	closed   bool
	wg       sync.WaitGroup
	dropping atomic.Bool
}

type dispatchItem struct {
	ctx    context.Context // the request's, without its cancellation: values only
	events []models.Event
}

// NewQueue queues for next; Close it at shutdown.
func NewQueue(next Dispatcher, log *slog.Logger) *Queue {
	if log == nil {
		log = slog.Default()
	}
	stop, cancel := context.WithCancel(context.Background())
	q := &Queue{next: next, log: log, items: make(chan dispatchItem, dispatchQueueSize), stop: stop, cancel: cancel}
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
	select {
	case q.items <- dispatchItem{ctx: context.WithoutCancel(ctx), events: events}:
		if q.dropping.Swap(false) {
			q.log.Info("workflow start queue accepts events again")
		}
	default:
		q.drop(len(events), "queue full")
		return
	}
	if q.running < dispatchWorkers {
		q.running++
		q.wg.Add(1)
		go q.work()
	}
}

func (q *Queue) drop(n int, why string) {
	metrics.DispatchDropped(n)
	if !q.dropping.Swap(true) {
		q.log.Warn("workflow starts left to the outbox sweeper", "reason", why, "events", n)
	}
}

// work drains the queue and ends when it is empty (checked under the lock Dispatch
// holds while it decides to start a worker, so no item is ever left without one).
func (q *Queue) work() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		var it dispatchItem
		select {
		case it = <-q.items:
		default:
			q.running--
			if q.running == 0 {
				q.emptied.Broadcast()
			}
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		if q.stop.Err() != nil {
			q.drop(len(it.events), "shutting down")
			continue
		}
		q.dispatch(it)
	}
}

func (q *Queue) dispatch(it dispatchItem) {
	ctx, cancel := context.WithCancel(it.ctx)
	defer cancel()
	defer context.AfterFunc(q.stop, cancel)()
	q.next.Dispatch(ctx, it.events)
}

// Close stops accepting events and waits until the queued ones are handed over or ctx
// ends; then it cancels the starts still in flight, drops what is left (the sweeper of
// the next process starts it) and waits for its goroutines.
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

// Idle waits until every batch queued so far has been handed over (tests).
func (q *Queue) Idle() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.running > 0 {
		q.emptied.Wait()
	}
}

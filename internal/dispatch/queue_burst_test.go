package dispatch_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/models"
)

// CONTRACT §17, "Starts under bursts": an environment's burst larger than the queue is
// not left to the sweeper's period: what does not fit stays in the outbox and the Queue
// reads it back as soon as there is room. No sweeper runs here; every event is handed
// over, once.
func TestQueueOverflowIsReadBackFromTheOutbox(t *testing.T) {
	outbox := newFakeOutbox()
	next := &recorder{outbox: outbox, gate: make(chan struct{})}
	q := dispatch.NewQueue(next, nil, outbox)
	var want []string
	for range 3000 { // more than the Queue holds, old or new
		evs := outbox.commit("env-a", 1)
		want = append(want, ids(evs)...)
		q.Dispatch(context.Background(), evs)
	}
	close(next.gate) // Temporal answers
	idle(t, q)
	got := next.handed()
	if len(got) != len(want) {
		t.Fatalf("%d events handed over, want %d (the rest waits for a sweeper)", len(got), len(want))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatal("the events handed over are not the committed ones, once each")
	}
}

// The overflow is read back oldest first, and a change's events stay together in order
// (one larger than an environment's part goes in parts): with one worker, the events are
// handed over in commit order.
func TestQueueOverflowKeepsCommitOrder(t *testing.T) {
	outbox := newFakeOutbox()
	next := &recorder{outbox: outbox, gate: make(chan struct{})}
	q := dispatch.NewQueueWithLimits(next, nil, outbox, 1, 4, 16)
	var want []string
	for k := range 60 {
		n := 1 + k%3
		if k == 30 {
			n = 10
		}
		evs := outbox.commit("env-a", n)
		want = append(want, ids(evs)...)
		q.Dispatch(context.Background(), evs)
	}
	close(next.gate)
	idle(t, q)
	if got := next.handed(); !slices.Equal(got, want) {
		t.Fatalf("handed over in this order:\n%v\nwant commit order:\n%v", got, want)
	}
}

// While one environment's burst is queued, another's batches start at the next free
// worker: an environment above its share (the workers divided among the environments
// with work) takes no more.
func TestQueueSharesWorkersAmongEnvironments(t *testing.T) {
	g := gated{calls: make(chan call, 64)}
	outbox := newFakeOutbox()
	q := dispatch.NewQueue(g, nil, outbox)
	defer q.Close(cancelled())
	for range 100 {
		q.Dispatch(context.Background(), outbox.commit("env-a", 1))
	}
	var held []call // env-a's batches in flight: every worker
	for range 32 {
		held = append(held, g.next(t))
	}
	for range 100 {
		q.Dispatch(context.Background(), outbox.commit("env-b", 1))
	}
	// Each batch of env-a that ends frees a worker: env-b takes it while env-a holds more
	// than its share, 16 of 32.
	took := map[string]int{}
	for i := range 16 {
		close(held[i].release)
		took[g.next(t).env]++
	}
	if took["env-b"] != 16 {
		t.Fatalf("of 16 freed workers env-b took %d, env-a %d; want all for env-b (env-a held every worker)", took["env-b"], took["env-a"])
	}
}

// An environment whose batches are all in flight reserves no more workers than it
// holds: another's burst uses every other worker.
func TestQueueLeavesNoWorkerIdleWhileBatchesWait(t *testing.T) {
	g := gated{calls: make(chan call, 64)}
	outbox := newFakeOutbox()
	q := dispatch.NewQueue(g, nil, outbox)
	defer q.Close(cancelled())
	q.Dispatch(context.Background(), outbox.commit("env-b", 1))
	if c := g.next(t); c.env != "env-b" {
		t.Fatalf("handed over %s's batch, want env-b's", c.env)
	}
	for range 100 {
		q.Dispatch(context.Background(), outbox.commit("env-a", 1))
	}
	for range 31 { // every worker but env-b's
		if c := g.next(t); c.env != "env-a" {
			t.Fatalf("handed over %s's batch, want env-a's", c.env)
		}
	}
}

// Starts that fail (Temporal is away: nothing is marked started) are not read back again
// and again: the Queue hands each event over once, passes over a few failures, then
// leaves the rest to the sweeper.
func TestQueueLeavesFailingStartsToTheSweeper(t *testing.T) {
	outbox := newFakeOutbox()
	next := &recorder{outbox: outbox, gate: make(chan struct{}), failing: true}
	q := dispatch.NewQueueWithLimits(next, nil, outbox, 2, 4, 16)
	for range 200 {
		q.Dispatch(context.Background(), outbox.commit("env-a", 1))
	}
	close(next.gate)
	idle(t, q)
	got := next.handed()
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("%s handed over twice: failing starts are read back in a loop", id)
		}
		seen[id] = true
	}
	if len(got) > 100 || outbox.reads > 50 {
		t.Fatalf("%d of 200 events handed over in %d outbox reads while every start fails; want the rest left to the sweeper", len(got), outbox.reads)
	}
}

// One start that fails (a timeout under load) is left to the sweeper, and the reading
// back goes on past it: every other event is handed over.
func TestQueueReadsBackPastAFailedStart(t *testing.T) {
	outbox := newFakeOutbox()
	next := &recorder{outbox: outbox, gate: make(chan struct{}), fails: map[string]bool{}}
	q := dispatch.NewQueueWithLimits(next, nil, outbox, 2, 4, 16)
	var want []string
	for k := range 100 {
		evs := outbox.commit("env-a", 1)
		if k == 20 || k == 50 {
			next.fails[evs[0].ID] = true
		}
		want = append(want, evs[0].ID)
		q.Dispatch(context.Background(), evs)
	}
	close(next.gate)
	idle(t, q)
	got := next.handed()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%d events handed over, want each of the %d once", len(got), len(want))
	}
}

// Close hands over what was queued before it, when the grace allows; what comes after is
// dropped (the outbox and the sweeper keep it), and Close never waits on a start beyond
// its grace (TestQueueCloseCancelsStarts).
func TestQueueCloseHandsOverWhatWasQueued(t *testing.T) {
	outbox := newFakeOutbox()
	next := &recorder{outbox: outbox, gate: make(chan struct{})}
	q := dispatch.NewQueue(next, nil, outbox)
	var want []string
	for _, env := range []string{"env-a", "env-b", "env-c"} {
		for range 50 {
			evs := outbox.commit(env, 2)
			want = append(want, ids(evs)...)
			q.Dispatch(context.Background(), evs)
		}
	}
	closed := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		q.Close(ctx)
		close(closed)
	}()
	time.Sleep(20 * time.Millisecond) // Close has begun (if not, the events below are dropped anyway)
	close(next.gate)
	<-closed
	q.Dispatch(context.Background(), []models.Event{{ID: "late", EnvironmentID: "env-a"}})
	q.Idle()
	got := next.handed()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Close handed over %d events, want the %d queued before it", len(got), len(want))
	}
}

// cancelled is a context already ended: Close with no grace.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

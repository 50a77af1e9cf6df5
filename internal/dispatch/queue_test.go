package dispatch_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/models"
)

// A Queue that is full or closed drops (the sweeper starts those events); Close
// cancels the starts in flight so that shutdown never waits on Temporal.
func TestQueueCloseCancelsStarts(t *testing.T) {
	// A guard against hanging, not a measure: the start below returns only when cancelled.
	guard, cancelGuard := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelGuard()
	started := make(chan struct{})
	var (
		mu     sync.Mutex
		handed []string
	)
	q := dispatch.NewQueue(dispatchFunc(func(ctx context.Context, events []models.Event) {
		mu.Lock()
		handed = append(handed, ids(events)...)
		mu.Unlock()
		if events[0].ID == "e1" {
			close(started)
			<-ctx.Done()
		}
	}), nil, nil)
	q.Dispatch(context.Background(), []models.Event{{ID: "e1"}})
	within(t, guard, "e1 was never handed over", func() { <-started })
	noGrace, cancel := context.WithCancel(context.Background())
	cancel() // no grace: in-flight starts are cancelled at once
	within(t, guard, "Close waited for the start in flight instead of cancelling it", func() { q.Close(noGrace) })
	within(t, guard, "a Dispatch after Close blocked", func() {
		q.Dispatch(context.Background(), []models.Event{{ID: "e2"}}) // after Close: dropped
		q.Idle()
	})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(handed, []string{"e1"}) {
		t.Fatalf("handed over %v, want [e1]: e2 came after Close and is the sweeper's", handed)
	}
}

// within runs f and fails the test with what if f has not returned when guard ends.
func within(t *testing.T, guard context.Context, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-guard.Done():
		t.Fatal(what)
	}
}

type dispatchFunc func(context.Context, []models.Event)

func (f dispatchFunc) Dispatch(ctx context.Context, events []models.Event) { f(ctx, events) }

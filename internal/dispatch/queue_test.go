package dispatch_test

import (
	"context"
	"testing"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/models"
)

// A Queue that is full or closed drops (the sweeper starts those events); Close
// cancels the starts in flight so that shutdown never waits on Temporal.
func TestQueueCloseCancelsStarts(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan struct{})
	q := dispatch.NewQueue(dispatchFunc(func(ctx context.Context, _ []models.Event) {
		close(started)
		<-ctx.Done()
		close(cancelled)
	}), nil, nil)
	q.Dispatch(context.Background(), []models.Event{{ID: "e1"}})
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: in-flight starts are cancelled at once
	q.Close(ctx)
	<-cancelled
	q.Dispatch(context.Background(), []models.Event{{ID: "e2"}}) // after Close: dropped, never blocks
	q.Idle()
}

type dispatchFunc func(context.Context, []models.Event)

func (f dispatchFunc) Dispatch(ctx context.Context, events []models.Event) { f(ctx, events) }

package dispatch_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// heldClient holds every workflow start until released, then reports the start's context
// on seen and answers err.
type heldClient struct {
	client.Client
	release chan struct{}
	seen    chan startContext
	err     error
}

// startContext is what a start's context looked like once released.
type startContext struct {
	err         error
	hasDeadline bool
}

func (c *heldClient) ExecuteWorkflow(ctx context.Context, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	<-c.release
	_, ok := ctx.Deadline()
	c.seen <- startContext{err: ctx.Err(), hasDeadline: ok}
	return nil, c.err
}

// recordsTo is a log handler that hands each record's message to a channel.
type recordsTo chan string

func (h recordsTo) Enabled(context.Context, slog.Level) bool { return true }
func (h recordsTo) Handle(_ context.Context, r slog.Record) error {
	h <- r.Message
	return nil
}
func (h recordsTo) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordsTo) WithGroup(string) slog.Handler      { return h }

// A start after commit (a meter's backfill or purge, an endpoint's deletion) returns
// while Temporal has not answered, so the request does not
// wait for it; it outlives the request's context, under a deadline of its own; a start
// that fails is logged for the sweeper.
func TestDetachedMeterStarts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(ctx context.Context, c client.Client, log *slog.Logger)
	}{
		{"backfill", func(ctx context.Context, c client.Client, log *slog.Logger) {
			(&dispatch.Jobs{Client: c, Store: &jobRows{}, Log: log}).StartDetached(ctx, store.BackfillOf(backfilling))
		}},
		{"purge", func(ctx context.Context, c client.Client, log *slog.Logger) {
			(&dispatch.Jobs{Client: c, Store: &jobRows{}, Log: log}).StartDetached(ctx, store.PurgeOf(models.MeterPurge{MeterID: "m-1", EnvironmentID: "env-1"}))
		}},
		{"endpoint deletion", func(ctx context.Context, c client.Client, log *slog.Logger) {
			(&dispatch.Jobs{Client: c, Store: &jobRows{}, Log: log}).StartDetached(ctx, store.DeletionOf(models.EndpointDeletion{EndpointID: "ep-1", EnvironmentID: "env-1"}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &heldClient{release: make(chan struct{}), seen: make(chan startContext, 1), err: errors.New("connection refused")}
			logs := make(recordsTo, 1)
			ctx, cancel := context.WithCancel(context.Background())
			tc.start(ctx, c, slog.New(logs)) // returns although the start is held
			cancel()                         // the request ends
			close(c.release)
			if got := <-c.seen; got.err != nil || !got.hasDeadline {
				t.Fatalf("the start's context: err %v, deadline %v; want live, with a deadline", got.err, got.hasDeadline)
			}
			want := "meter " + tc.name + " not started; the sweeper will"
			if tc.name == "endpoint deletion" {
				want = "endpoint deletion not started; the sweeper will"
			}
			if msg := <-logs; msg != want {
				t.Fatalf("logged %q, want %q", msg, want)
			}
		})
	}
}

package app

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/workflows/wire"
)

// The seam of a change (issue 42): the two collaborators every transaction of the store
// calls, wired once at start. The fan-out is the webhook domain's (which endpoints take
// an event, its body); after commit is the process's one dispatcher.

// wireFanOut gives the store the webhook domain's fan-out, with the process's one cache
// of parsed filters.
func wireFanOut(st *store.Store) { st.SetFanOut(webhook.NewFanOut()) }

// afterCommit wires the process's one dispatcher into the store and returns the start
// queue it uses (Close it at the end). Every transaction's events go to it right after
// the commit, and its jobs to jobs. On PostgreSQL new events go to the outbox path — a
// process with a claimer wakes it; one without (`revops api`) wakes the workers' by
// notification, at most one per 50 ms, run by goRun — and replays (SignalWithStart,
// never eager) to the queue, which reaches their workflows from here; with no outbox
// to read back, an overflow of replays is left to the claimers' poll. An endpoint's new
// pace goes to the engine's weight overrides at once (pacer, CONTRACT §27). On SQLite
// (`revops dev`, one process) the queue starts every run, reading an overflow back from
// the outbox. It returns at once (CONTRACT §10): a request never waits for Temporal.
func afterCommit(ctx context.Context, st *store.Store, starter *dispatch.Starter, jobs *dispatch.Jobs, claimer *dispatch.Claimer,
	pacer *dispatch.Pacer, log *slog.Logger, goRun func(func())) *dispatch.Queue {
	var outbox dispatch.Dispatcher // new events, on PostgreSQL: the claimers' path
	switch {
	case claimer != nil:
		outbox = dispatch.Wakes(claimer.Wake)
	case st.ClaimsStarts():
		n := &dispatch.Notifier{Store: st}
		goRun(func() { n.Run(ctx) })
		outbox = n
	}
	var (
		queue  *dispatch.Queue
		events dispatch.Dispatcher
	)
	if outbox != nil {
		queue = dispatch.NewQueue(starter, log, nil)
		events = dispatch.Outboxed{New: outbox, Replays: queue}
	} else {
		queue = dispatch.NewQueue(starter, log, st)
		events = queue
	}
	st.SetAfterCommit(dispatch.AfterCommit{Events: events, Jobs: jobs, Paces: pacer})
	return queue
}

// closeQueue lets the starts the queue holds finish within dispatchGrace: the process has
// committed its last change.
func closeQueue(q *dispatch.Queue) {
	grace, cancel := context.WithTimeout(context.Background(), dispatchGrace)
	defer cancel()
	q.Close(grace)
}

// newPacer is the process's push of paces to the paced queue's weight overrides
// (CONTRACT §27), after commit, off the committing goroutine.
func newPacer(cfg config.Config, tc client.Client, log *slog.Logger, goRun func(func())) *dispatch.Pacer {
	return &dispatch.Pacer{Queue: pacedQueue(cfg, tc), Log: log, GoRun: goRun}
}

// pacedQueue is the paced task queue of the process's namespace.
func pacedQueue(cfg config.Config, tc client.Client) temporalsetup.PacedQueue {
	return temporalsetup.PacedQueue{Client: tc, Namespace: cfg.TemporalNamespace, Queue: wire.PacedTaskQueue}
}

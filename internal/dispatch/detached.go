package dispatch

import (
	"context"
	"log/slog"
	"time"
)

// detachedStartTimeout bounds a start made right after a commit.
const detachedStartTimeout = 10 * time.Second

// startDetached runs start without making the caller wait: detached from ctx's end (the
// request that committed the row answers at once, and the start goes on), bounded by its
// own timeout. A failure is logged and left to the sweeper, which starts whatever a
// start after commit missed, so nothing is lost when Temporal is away. what names the
// start in the log ("meter backfill"); args identify its row.
func startDetached(ctx context.Context, log *slog.Logger, what string, start func(context.Context) error, args ...any) {
	if log == nil {
		log = slog.Default()
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, detachedStartTimeout)
		defer cancel()
		if err := start(sctx); err != nil {
			log.Warn(what+" not started; the sweeper will", append(args, "err", err)...)
		}
	}()
}

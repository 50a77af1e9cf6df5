package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows"
)

// firstRetry is the first wait after a failed worker start; it doubles up to the maximum.
const firstRetry = time.Second

// runWorker runs the webhook worker until ctx ends, then stops it. Temporal may be away
// when the process starts or at any later start attempt: the process keeps running (its
// API serves, the outbox keeps the events) and the start is retried with backoff, logged
// when a streak of failures begins and when it ends.
func runWorker(ctx context.Context, tc client.Client, acts *activities.Activities, ret *activities.Retention, bulk *activities.BulkReplay, log *slog.Logger, maxWait time.Duration) {
	wait := min(firstRetry, maxWait)
	failures := 0
	var began time.Time
	for {
		w, err := startWorker(ctx, tc, acts, ret, bulk)
		if err == nil {
			if failures > 0 {
				log.Info("worker connected to Temporal", "task_queue", workflows.TaskQueue,
					"attempts", failures+1, "waited", time.Since(began).Round(time.Millisecond))
			} else {
				log.Info("worker started", "task_queue", workflows.TaskQueue)
			}
			<-ctx.Done()
			w.Stop()
			return
		}
		if ctx.Err() != nil {
			return
		}
		if failures == 0 {
			began = time.Now()
			log.Warn("worker cannot start, Temporal is unreachable; retrying until it answers", "task_queue", workflows.TaskQueue, "err", err)
		} else {
			log.Debug("worker start failed again", "attempts", failures+1, "err", err)
		}
		failures++
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
	}
}

// startWorker creates and starts a worker once Temporal answers a health check: a
// worker is only built when it has a chance to start.
func startWorker(ctx context.Context, tc client.Client, acts *activities.Activities, ret *activities.Retention, bulk *activities.BulkReplay) (worker.Worker, error) {
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := tc.CheckHealth(hctx, &client.CheckHealthRequest{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("temporal health check: %w", err)
	}
	w := worker.New(tc, workflows.TaskQueue, worker.Options{})
	workflows.Register(w, acts)
	workflows.RegisterRetention(w, ret)
	w.RegisterActivity(bulk) // BulkReplay's page; the workflow is in workflows.Register
	if err := w.Start(); err != nil {
		// A worker starts once (its Start is memoised): stop this one, which may have
		// started pollers before failing, and build a new one next time. Rare: Temporal
		// answered the health check a moment ago.
		w.Stop()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return w, nil
}

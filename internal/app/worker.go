package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/buildinfo"
	"github.com/revops/revops/workflows"
	"github.com/revops/revops/workflows/wire"
)

// firstRetry is the first wait after a failed worker start; it doubles up to the maximum.
const firstRetry = time.Second

// runWorker runs the process's workers (one per task queue, workflows.NewWorkers) until
// ctx ends, then stops them. Temporal may be away when the process starts or at any later
// start attempt: the process keeps running (its API serves, the outbox keeps the events)
// and the start is retried with backoff, logged when a streak of failures begins and
// when it ends.
func runWorker(ctx context.Context, tc client.Client, acts workflows.Activities, slots int, log *slog.Logger, maxWait time.Duration) {
	wait := min(firstRetry, maxWait)
	failures := 0
	var began time.Time
	for {
		w, err := startWorker(ctx, tc, acts, slots)
		if err == nil {
			if failures > 0 {
				log.Info("worker connected to Temporal", "task_queues", taskQueues, "activity_slots", slots,
					"attempts", failures+1, "waited", time.Since(began).Round(time.Millisecond))
			} else {
				log.Info("worker started", "task_queues", taskQueues, "activity_slots", slots)
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
			log.Warn("worker cannot start, Temporal is unreachable; retrying until it answers", "task_queues", taskQueues, "err", err)
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

// taskQueues names the queues a worker process polls, for its log lines.
var taskQueues = []string{wire.TaskQueue, wire.JobsTaskQueue, wire.SystemTaskQueue, wire.PacedTaskQueue}

// startWorker creates and starts the workers once Temporal answers a health check: a
// worker is only built when it has a chance to start.
func startWorker(ctx context.Context, tc client.Client, acts workflows.Activities, slots int) (workflows.Workers, error) {
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := tc.CheckHealth(hctx, &client.CheckHealthRequest{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("temporal health check: %w", err)
	}
	// The identity names the release and that it honours order lanes (CONTRACT §26): the
	// gate on ordering "object" reads it from Temporal, and operators see it there.
	ws := workflows.NewWorkers(tc, acts, slots, worker.Options{Identity: workerIdentity()})
	// A worker starts once (its Start is memoised): Start stops the ones it started
	// when one fails, and a new set is built next time. Rare: Temporal answered the
	// health check a moment ago.
	if err := ws.Start(); err != nil {
		return nil, err
	}
	return ws, nil
}

// workerIdentity is this worker's Temporal identity: the SDK's default (pid@host), the
// release's version (§16) and that it honours order lanes (webhook.WorkerIdentity).
func workerIdentity() string {
	host, _ := os.Hostname()
	return webhook.WorkerIdentity(fmt.Sprintf("%d@%s", os.Getpid(), host), buildinfo.Read().Version)
}

package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/platform/isolate"
	"github.com/revops/revops/workflows/wire"
)

// job is a workflow a tenant's row asks for on revops-jobs (a bulk replay job, a meter's
// backfill), decided in the database and started after commit or by a sweeper.
type job struct {
	workflowID, workflowType      string
	environmentID, organizationID string
	summary                       string
	input                         any
	// markStarted records on the row that its workflow was started.
	markStarted func(ctx context.Context, at time.Time) error
}

// startJob starts the job's workflow and marks its row started. The workflow id is the
// row's, under REJECT_DUPLICATE: a row has one run, ever (one that continues as new stays
// the same workflow); one already started, or finished, counts as started. A panic on
// the row's data fails this start alone (isolate.Call), as any failed start.
func startJob(ctx context.Context, c client.Client, j job) error {
	return isolate.Call("workflow_start", func() error { return launchJob(ctx, c, j) })
}

func launchJob(ctx context.Context, c client.Client, j job) error {
	opts := client.StartWorkflowOptions{
		ID:                       j.workflowID,
		TaskQueue:                wire.JobsTaskQueue,
		Priority:                 wire.JobsPriority(j.environmentID), // fair by environment (CONTRACT §17)
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		StaticSummary:            j.summary,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(wire.AttrEnvironment).ValueSet(j.environmentID),
			temporal.NewSearchAttributeKeyKeyword(wire.AttrOrganizationID).ValueSet(j.organizationID),
		),
	}
	_, err := c.ExecuteWorkflow(ctx, opts, j.workflowType, j.input)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start workflow %s: %w", opts.ID, err)
	}
	// The run exists now: record it even if the caller has gone.
	markCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return j.markStarted(markCtx, time.Now())
}

// jobSweep is the pass of a job sweeper (sweep) over the rows list finds older than age
// (default 5 s), each start bounded by 5 s; name gives a row's id (its key among the
// holds) and its environment (for the log line). what names the job in log lines.
func jobSweep[T any](age time.Duration, h *holds, log *slog.Logger, what string, list func(context.Context, time.Time, int) ([]T, error),
	start func(context.Context, T) error, name func(T) (id, envID string)) sweep[T] {
	return sweep[T]{
		age: orDefault(age, 5*time.Second), holds: h, log: log, what: what + " workflow", list: list,
		start: func(ctx context.Context, row T) error {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return start(sctx, row)
		},
		key: func(row T) string { id, _ := name(row); return id },
		attrs: func(row T) []any {
			id, envID := name(row)
			return []any{"id", id, "environment_id", envID}
		},
	}
}

// runJobSweeper runs sweep every interval until ctx ends, while Temporal answers (h),
// and logs what it did under what ("replay job", "meter backfill").
func runJobSweeper(ctx context.Context, every time.Duration, h Reachability, log *slog.Logger, what string, sweep func(context.Context) (int, error)) {
	if log == nil {
		log = slog.Default()
	}
	sweepEvery(ctx, every, h, func() {
		n, err := sweep(ctx)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			log.Warn(what+" sweeper cannot start workflows; retrying every interval", "started", n, "err", err)
		case n > 0:
			log.Info(what+" sweeper started workflows", "started", n)
		}
	})
}

package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/workflows"
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
// the same workflow); one already started, or finished, counts as started.
func startJob(ctx context.Context, c client.Client, j job) error {
	opts := client.StartWorkflowOptions{
		ID:                       j.workflowID,
		TaskQueue:                workflows.JobsTaskQueue,
		Priority:                 workflows.JobsPriority(j.environmentID), // fair by environment (CONTRACT §17)
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		StaticSummary:            j.summary,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(workflows.AttrEnvironment).ValueSet(j.environmentID),
			temporal.NewSearchAttributeKeyKeyword(workflows.AttrOrganizationID).ValueSet(j.organizationID),
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

// sweepJobs starts the workflow of every row older than age that list says has none,
// each start bounded, and says how many; it stops at the first failure (Temporal is
// likely away).
func sweepJobs[T any](ctx context.Context, age time.Duration, list func(context.Context, time.Time, int) ([]T, error), start func(context.Context, T) error) (int, error) {
	return sweepBatches(ctx, orDefault(age, 5*time.Second), list, func(ctx context.Context, row T) error {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return start(sctx, row)
	})
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

package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
)

// ReplayJobStore is what starting bulk replay workflows needs of the database.
type ReplayJobStore interface {
	UnstartedReplayJobs(ctx context.Context, before time.Time, limit int) ([]models.ReplayJob, error)
	MarkReplayJobStarted(ctx context.Context, id string, at time.Time) error
}

var _ ReplayJobStore = (*store.Store)(nil)

// ReplayJobs starts the BulkReplay workflow of replay jobs (CONTRACT §16): right after
// the API records one (StartReplayJob, off the request path), and for whatever that
// missed (RunSweeper, in the worker).
type ReplayJobs struct {
	Client client.Client
	Store  ReplayJobStore
	Log    *slog.Logger
	Rate   float64 // REVOPS_REPLAY_RATE; 0 means workflows.DefaultReplayRate
	// SweepAge: jobs younger than this are left to the API's start; default 5s.
	SweepAge time.Duration
	Health   Reachability // nil: always try
}

func (r *ReplayJobs) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

// StartReplayJob starts the job's workflow and marks the job started. The workflow id is
// the job's, under REJECT_DUPLICATE: a job has one BulkReplay run, ever; one already
// started counts as started.
func (r *ReplayJobs) StartReplayJob(ctx context.Context, j models.ReplayJob) error {
	rate := r.Rate
	if rate <= 0 {
		rate = workflows.DefaultReplayRate
	}
	opts := client.StartWorkflowOptions{
		ID:                       workflows.BulkReplayWorkflowID(j.ID),
		TaskQueue:                workflows.JobsTaskQueue,
		Priority:                 workflows.JobsPriority(j.EnvironmentID), // fair by environment (CONTRACT §17)
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		StaticSummary:            fmt.Sprintf("Bulk replay %s: %d deliveries at %g/s", j.ID, j.Matched, rate),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(workflows.AttrEnvironment).ValueSet(j.EnvironmentID),
			temporal.NewSearchAttributeKeyKeyword(workflows.AttrOrganizationID).ValueSet(j.OrganizationID),
		),
	}
	in := workflows.BulkReplayInput{JobID: j.ID, Rate: rate, PageSize: workflows.ReplayPageSize(rate)}
	_, err := r.Client.ExecuteWorkflow(ctx, opts, workflows.BulkReplayWorkflowName, in)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start workflow %s: %w", opts.ID, err)
	}
	markCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return r.Store.MarkReplayJobStarted(markCtx, j.ID, time.Now())
}

// Sweep starts the workflow of every running job older than SweepAge that has none, and
// says how many; it stops at the first failure (Temporal is likely away).
func (r *ReplayJobs) Sweep(ctx context.Context) (int, error) {
	return sweepBatches(ctx, orDefault(r.SweepAge, 5*time.Second), r.Store.UnstartedReplayJobs,
		func(ctx context.Context, j models.ReplayJob) error {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return r.StartReplayJob(sctx, j)
		})
}

// RunSweeper sweeps every interval until ctx ends, while Temporal answers.
func (r *ReplayJobs) RunSweeper(ctx context.Context, every time.Duration) {
	sweepEvery(ctx, every, r.Health, func() {
		n, err := r.Sweep(ctx)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			r.log().Warn("replay job sweeper cannot start workflows; retrying every interval", "started", n, "err", err)
		case n > 0:
			r.log().Info("replay job sweeper started workflows", "started", n)
		}
	})
}

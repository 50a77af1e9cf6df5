package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// ReplayJobStore is what starting bulk replay workflows needs of the database.
type ReplayJobStore interface {
	UnstartedReplayJobs(ctx context.Context, before time.Time, limit int) ([]models.ReplayJob, error)
	MarkReplayJobStarted(ctx context.Context, id string, at time.Time) error
}

var _ ReplayJobStore = (*store.Store)(nil)

// ReplayJobs starts the BulkReplay workflow of replay jobs (CONTRACT §16): right after
// the API records one (StartDetached, off the request path), and for whatever that
// missed (RunSweeper, in the worker).
type ReplayJobs struct {
	Client client.Client
	Store  ReplayJobStore
	Log    *slog.Logger
	Rate   float64 // REVOPS_REPLAY_RATE; 0 means wire.DefaultReplayRate
	// SweepAge: jobs younger than this are left to the API's start; default 5s.
	SweepAge time.Duration
	Health   Reachability // nil: always try

	holds holds // starts set aside after they failed
}

// StartReplayJob starts the job's workflow and marks the job started (startJob): a job
// has one BulkReplay run, ever.
func (r *ReplayJobs) StartReplayJob(ctx context.Context, j models.ReplayJob) error {
	rate := r.Rate
	if rate <= 0 {
		rate = wire.DefaultReplayRate
	}
	return startJob(ctx, r.Client, job{
		workflowID:     wire.BulkReplayWorkflowID(j.ID),
		workflowType:   wire.BulkReplayWorkflowName,
		environmentID:  j.EnvironmentID,
		organizationID: j.OrganizationID,
		summary:        fmt.Sprintf("Bulk replay %s: %d deliveries at %g/s", j.ID, j.Matched, rate),
		input:          wire.BulkReplayInput{JobID: j.ID, Rate: rate, PageSize: wire.ReplayPageSize(rate)},
		markStarted: func(ctx context.Context, at time.Time) error {
			return r.Store.MarkReplayJobStarted(ctx, j.ID, at)
		},
	})
}

// StartDetached starts the job's workflow right after the API recorded it, off the
// request path (startDetached: its own timeout, a failure logged and
// left to Sweep).
func (r *ReplayJobs) StartDetached(ctx context.Context, j models.ReplayJob) {
	startDetached(ctx, r.Log, "replay job's workflow", func(ctx context.Context) error { return r.StartReplayJob(ctx, j) }, "job_id", j.ID)
}

// Sweep starts the workflow of every running job older than SweepAge that has none, and
// says how many: a start that fails fails only itself (sweep), failures in a
// row stop it (Temporal is likely away).
func (r *ReplayJobs) Sweep(ctx context.Context) (int, error) {
	return jobSweep(r.SweepAge, &r.holds, r.Log, "replay job", r.Store.UnstartedReplayJobs, r.StartReplayJob,
		func(j models.ReplayJob) (string, string) { return j.ID, j.EnvironmentID }).run(ctx)
}

// RunSweeper sweeps every interval until ctx ends, while Temporal answers.
func (r *ReplayJobs) RunSweeper(ctx context.Context, every time.Duration) {
	runJobSweeper(ctx, every, r.Health, r.Log, "replay job", r.Sweep)
}

package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/platform/isolate"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/workflows/wire"
)

// JobStore is what starting the workflows of tenant jobs needs of the database.
type JobStore interface {
	UnstartedJobs(ctx context.Context, kind store.JobKind, before time.Time, limit int) ([]store.Job, error)
	MarkJobStarted(ctx context.Context, j store.Job, at time.Time) error
}

var _ JobStore = (*store.Store)(nil)

// Jobs starts the workflows of tenant jobs on revops-jobs (CONTRACT §16, §18, §21): bulk
// replays, meter backfills and purges, endpoint deletions — one kind of start for all.
// A job is a row its transaction recorded; the store hands it over right after the
// commit (AfterCommit: StartDetached, off the request path), and the sweeper starts
// whatever that missed (RunSweeper, in the worker), so that Temporal's absence or a
// crash after the commit only delays a job.
type Jobs struct {
	Client client.Client
	Store  JobStore
	Log    *slog.Logger
	Rate   float64 // REVOPS_REPLAY_RATE (bulk replays); 0 means wire.DefaultReplayRate
	// SweepAge: jobs younger than this are left to the start after commit; default 5s.
	SweepAge time.Duration
	Health   Reachability // nil: always try

	holds holds // starts set aside after they failed, by Job.Key
}

// Start starts the job's workflow and marks its row started. The workflow id is the
// row's, under REJECT_DUPLICATE: a row has one run, ever (one that continues as new stays
// the same workflow); one already started, or finished, counts as started. A panic on
// the row's data fails this start alone (isolate.Call), as any failed start.
func (s *Jobs) Start(ctx context.Context, j store.Job) error {
	return isolate.Call("workflow_start", func() error { return s.launch(ctx, j) })
}

func (s *Jobs) launch(ctx context.Context, j store.Job) error {
	wf, err := s.workflow(j)
	if err != nil {
		return err
	}
	opts := client.StartWorkflowOptions{
		ID:                       wf.id,
		TaskQueue:                wire.JobsTaskQueue,
		Priority:                 wire.JobsPriority(j.EnvironmentID), // fair by environment (CONTRACT §17)
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		StaticSummary:            wf.summary,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(wire.AttrEnvironment).ValueSet(j.EnvironmentID),
			temporal.NewSearchAttributeKeyKeyword(wire.AttrOrganizationID).ValueSet(j.OrganizationID),
		),
	}
	_, err = s.Client.ExecuteWorkflow(ctx, opts, wf.name, wf.input)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start workflow %s: %w", opts.ID, err)
	}
	// The run exists now: record it even if the caller has gone.
	markCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.Store.MarkJobStarted(markCtx, j, time.Now())
}

// jobWorkflow is the workflow a job asks for.
type jobWorkflow struct {
	id, name, summary string
	input             any
}

// workflow is the job's workflow: its id (from the row's key), name, summary and input.
func (s *Jobs) workflow(j store.Job) (jobWorkflow, error) {
	switch j.Kind {
	case store.JobReplay:
		rate := s.Rate
		if rate <= 0 {
			rate = wire.DefaultReplayRate
		}
		return jobWorkflow{id: wire.BulkReplayWorkflowID(j.ID), name: wire.BulkReplayWorkflowName,
			summary: fmt.Sprintf("Bulk replay %s: %d deliveries at %g/s", j.ID, j.Matched, rate),
			input:   wire.BulkReplayInput{JobID: j.ID, Rate: rate, PageSize: wire.ReplayPageSize(rate)}}, nil
	case store.JobMeterBackfill:
		return jobWorkflow{id: wire.MeterBackfillWorkflowID(j.ID), name: wire.MeterBackfillWorkflowName,
			summary: fmt.Sprintf("Backfill of meter %s (%s)", j.Name, j.ID),
			input:   wire.MeterBackfillInput{MeterID: j.ID, EnvironmentID: j.EnvironmentID}}, nil
	case store.JobMeterPurge:
		return jobWorkflow{id: wire.MeterPurgeWorkflowID(j.ID), name: wire.MeterPurgeWorkflowName,
			summary: fmt.Sprintf("Purge of deleted meter %s (%s)", j.Name, j.ID),
			input:   wire.MeterPurgeInput{MeterID: j.ID, EnvironmentID: j.EnvironmentID}}, nil
	case store.JobEndpointDeletion:
		return jobWorkflow{id: wire.EndpointDeletionWorkflowID(j.ID), name: wire.EndpointDeletionWorkflowName,
			summary: "Unfinished deliveries of deleted webhook endpoint " + j.ID,
			input:   wire.EndpointDeletionInput{EndpointID: j.ID, EnvironmentID: j.EnvironmentID}}, nil
	}
	return jobWorkflow{}, fmt.Errorf("unknown job kind %q", j.Kind)
}

// detachedStartTimeout bounds a start made right after a commit.
const detachedStartTimeout = 10 * time.Second

// StartDetached starts the job's workflow without making the caller wait: detached from
// ctx's end (the request that committed the row answers at once, and the start goes
// on), bounded by its own timeout. A failure is logged and left to the sweeper, which
// starts whatever a start after commit missed, so nothing is lost when Temporal is away.
func (s *Jobs) StartDetached(ctx context.Context, j store.Job) {
	ctx = context.WithoutCancel(ctx)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, detachedStartTimeout)
		defer cancel()
		if err := s.Start(sctx, j); err != nil {
			s.log().Warn(string(j.Kind)+" not started; the sweeper will", "id", j.ID, "environment_id", j.EnvironmentID, "err", err)
		}
	}()
}

func (s *Jobs) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Sweep starts, kind after kind, the workflow of every job older than SweepAge that has
// none, and says how many: a start that fails fails only itself (sweep), failures in a
// row stop a kind's pass (Temporal is likely away) but not the next kind's.
func (s *Jobs) Sweep(ctx context.Context) (int, error) {
	var (
		n    int
		errs []error
	)
	for _, kind := range store.JobKinds {
		m, err := s.kindSweep(kind).run(ctx)
		n += m
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// kindSweep is a pass over the jobs of one kind, each start bounded by 5 s.
func (s *Jobs) kindSweep(kind store.JobKind) sweep[store.Job] {
	return sweep[store.Job]{
		age: orDefault(s.SweepAge, 5*time.Second), holds: &s.holds, log: s.log(), what: string(kind) + " workflow",
		list: func(ctx context.Context, before time.Time, limit int) ([]store.Job, error) {
			return s.Store.UnstartedJobs(ctx, kind, before, limit)
		},
		start: func(ctx context.Context, j store.Job) error {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return s.Start(sctx, j)
		},
		key:   store.Job.Key,
		attrs: func(j store.Job) []any { return []any{"id", j.ID, "environment_id", j.EnvironmentID} },
	}
}

// RunSweeper sweeps every interval until ctx ends, while Temporal answers.
func (s *Jobs) RunSweeper(ctx context.Context, every time.Duration) {
	sweepEvery(ctx, every, s.Health, func() {
		n, err := s.Sweep(ctx)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			s.log().Warn("job sweeper cannot start workflows; retrying every interval", "started", n, "err", err)
		case n > 0:
			s.log().Info("job sweeper started workflows", "started", n)
		}
	})
}

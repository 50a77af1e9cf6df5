package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// A tenant job (CONTRACT §16, §18, §21) is a row that asks for a workflow on revops-jobs:
// a bulk replay job, a new meter's backfill, a deleted meter's purge, a deleted endpoint's
// unfinished deliveries. The transaction that writes the row records the job (Tx.jobs),
// and AfterCommit hands it to the one job starter right after the commit, as it hands
// events to the dispatcher; the starter's sweeper starts whatever that missed
// (UnstartedJobs).

// JobKind names a kind of tenant job; it is also what log lines call it.
type JobKind string

// The kinds of tenant jobs.
const (
	JobReplay           JobKind = "replay job"
	JobMeterBackfill    JobKind = "meter backfill"
	JobMeterPurge       JobKind = "meter purge"
	JobEndpointDeletion JobKind = "endpoint deletion"
)

// JobKinds are every kind, in the order the sweeper visits them.
var JobKinds = []JobKind{JobReplay, JobMeterBackfill, JobMeterPurge, JobEndpointDeletion}

// Job is one tenant job whose workflow is owed a start.
type Job struct {
	Kind JobKind
	// ID is the row's key, which names the workflow: the replay job's id, the meter's id
	// (backfill, purge), the deleted endpoint's id.
	ID                            string
	OrganizationID, EnvironmentID string
	// What the run's summary shows besides the id: a meter's key; a replay job's matched
	// deliveries.
	Name    string
	Matched int
}

// Key is the job's key among those a starter sets aside (kinds share no key space).
func (j Job) Key() string { return string(j.Kind) + ":" + j.ID }

// ReplayJobOf, BackfillOf, PurgeOf and DeletionOf are the job each row asks for.
func ReplayJobOf(r models.ReplayJob) Job {
	return Job{Kind: JobReplay, ID: r.ID, OrganizationID: r.OrganizationID, EnvironmentID: r.EnvironmentID, Matched: r.Matched}
}

func BackfillOf(m models.Meter) Job {
	return Job{Kind: JobMeterBackfill, ID: m.ID, OrganizationID: m.OrganizationID, EnvironmentID: m.EnvironmentID, Name: m.Key}
}

func PurgeOf(p models.MeterPurge) Job {
	return Job{Kind: JobMeterPurge, ID: p.MeterID, OrganizationID: p.OrganizationID, EnvironmentID: p.EnvironmentID, Name: p.MeterKey}
}

func DeletionOf(d models.EndpointDeletion) Job {
	return Job{Kind: JobEndpointDeletion, ID: d.EndpointID, OrganizationID: d.OrganizationID, EnvironmentID: d.EnvironmentID}
}

// startJob records that the transaction wrote a job's row: handed to AfterCommit once
// it has committed.
func (tx *Tx) startJob(j Job) { tx.jobs = append(tx.jobs, j) }

// UnstartedJobs lists, oldest first, up to limit jobs of kind of every environment
// recorded before `before` whose workflow was not started: the sweeper's list (it works
// for all tenants).
func (s *Store) UnstartedJobs(ctx context.Context, kind JobKind, before time.Time, limit int) ([]Job, error) {
	switch kind {
	case JobReplay:
		return listJobs(s.UnstartedReplayJobs(ctx, before, limit))(ReplayJobOf)
	case JobMeterBackfill:
		return listJobs(s.UnstartedBackfills(ctx, before, limit))(BackfillOf)
	case JobMeterPurge:
		return listJobs(s.UnstartedPurges(ctx, before, limit))(PurgeOf)
	case JobEndpointDeletion:
		return listJobs(s.UnstartedEndpointDeletions(ctx, before, limit))(DeletionOf)
	}
	return nil, fmt.Errorf("unknown job kind %q", kind)
}

// listJobs turns rows (or their error) into jobs.
func listJobs[T any](rows []T, err error) func(func(T) Job) ([]Job, error) {
	return func(of func(T) Job) ([]Job, error) {
		if err != nil {
			return nil, err
		}
		out := make([]Job, len(rows))
		for i, r := range rows {
			out[i] = of(r)
		}
		return out, nil
	}
}

// MarkJobStarted records that the job's workflow was started.
func (s *Store) MarkJobStarted(ctx context.Context, j Job, at time.Time) error {
	switch j.Kind {
	case JobReplay:
		return s.MarkReplayJobStarted(ctx, j.ID, at)
	case JobMeterBackfill:
		return s.MarkBackfillStarted(ctx, j.ID, at)
	case JobMeterPurge:
		return s.MarkPurgeStarted(ctx, j.ID, at)
	case JobEndpointDeletion:
		return s.MarkEndpointDeletionStarted(ctx, j.ID, at)
	}
	return fmt.Errorf("unknown job kind %q", j.Kind)
}

package replay

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// MaxRunningJobs is how many bulk replay jobs an environment may have running at once
// (CONTRACT §17).
const MaxRunningJobs = 2

// ErrJobLimit refuses a bulk replay job while the environment already has
// MaxRunningJobs running. It comes wrapped in an *apperr.ConflictError with CodeJobLimit.
var ErrJobLimit = errors.New("too many running replay jobs")

// CodeJobLimit is the error code of ErrJobLimit.
const CodeJobLimit = "replay_job_limit"

// CreateJob records a running job for the deliveries matching f (CONTRACT §13: bulk
// replay matches deliveries) with how many it matches, and reply's answer (CONTRACT §14,
// its JobObject) in the same transaction. CreatedBefore is frozen at now at the latest, so events
// written later never join. A job matching nothing is done at once; a running one waits
// for its BulkReplay workflow (workflow_started_at unset until then).
//
// The job's slot is claimed before the deliveries are counted (CONTRACT §21, "counting
// before claiming"): an environment with MaxRunningJobs running jobs gets ErrJobLimit
// (§17) and never runs the count, the costly part. The slot is decided in the database:
// the running jobs are counted under the environment's replay-job lock, held to the
// commit, so concurrent requests on any replica never make a third. A cheap count of
// running jobs before the lock refuses at once, without waiting, once two jobs have
// committed. The count of matched deliveries then runs under that lock, bounded by the
// request's statement timeout: the answer's matched, and its status done when nothing
// matches, are what an API user reads at once (§9).
func CreateJob(ctx context.Context, st Store, env models.Env, f events.Filter, now time.Time, reply store.Keeper[JobObject]) (models.ReplayJob, error) {
	now = now.UTC().Truncate(time.Microsecond)
	if f.CreatedBefore == nil || f.CreatedBefore.After(now) {
		f.CreatedBefore = &now
	}
	j := models.ReplayJob{
		ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
		Status: models.ReplayJobRunning, FilterStatus: f.Status, FilterType: f.Type, FilterEndpointID: f.EndpointID,
		CreatedAfter: f.CreatedAfter, CreatedBefore: *f.CreatedBefore,
		HeartbeatAt: now, CreatedAt: now, UpdatedAt: now,
	}
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		if err := claimJobSlot(tx); err != nil {
			return err
		}
		n, err := tx.CountDeliveries(f.Query())
		if err != nil {
			return err
		}
		j.Matched = n
		if j.Matched == 0 {
			j.Status, j.FinishedAt = models.ReplayJobDone, &now
		}
		if err := tx.InsertReplayJob(&j); err != nil {
			return err
		}
		return reply.Keep(tx, ToJobObject(j))
	})
	return j, err
}

// claimJobSlot claims one of the environment's MaxRunningJobs slots in tx, or refuses
// with ErrJobLimit: checked once without a lock (a refusal costs no wait), then again
// under the environment's replay-job lock, which tx holds until its job is inserted and
// committed.
func claimJobSlot(tx *store.Tx) error {
	if err := checkRunningJobs(tx); err != nil {
		return err
	}
	if err := tx.LockReplayJobs(); err != nil {
		return err
	}
	return checkRunningJobs(tx)
}

// checkRunningJobs refuses a new job while the environment has MaxRunningJobs running.
func checkRunningJobs(tx *store.Tx) error {
	n, err := tx.RunningReplayJobs()
	if err != nil {
		return err
	}
	if n >= MaxRunningJobs {
		return apperr.ConflictOn(ErrJobLimit, CodeJobLimit,
			"This environment already has %d bulk replay jobs running, the most it may have; wait for one to finish (GET /v1/events/replay/{id}).", n)
	}
	return nil
}

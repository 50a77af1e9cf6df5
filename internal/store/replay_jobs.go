package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 25, name: "replay_jobs", sql: `
CREATE TABLE replay_jobs (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment_id TEXT NOT NULL REFERENCES environments(id),
	status TEXT NOT NULL,
	filter_status TEXT NOT NULL DEFAULT '',
	filter_type TEXT NOT NULL DEFAULT '',
	created_after {{ts}},
	created_before {{ts}} NOT NULL,
	matched INTEGER NOT NULL DEFAULT 0,
	replayed INTEGER NOT NULL DEFAULT 0,
	failed INTEGER NOT NULL DEFAULT 0,
	cursor_at {{ts}},
	cursor_id TEXT NOT NULL DEFAULT '',
	heartbeat_at {{ts}} NOT NULL,
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL,
	finished_at {{ts}}
);
CREATE INDEX replay_jobs_running ON replay_jobs (heartbeat_at) WHERE status = 'running'`})
}

func init() {
	// The running jobs of one environment are counted by every new job (the limit of
	// CONTRACT §17) and by every page (the environment's share of REVOPS_REPLAY_RATE).
	register(migration{version: 81, name: "replay_jobs_env_running", sql: `
CREATE INDEX replay_jobs_env_running ON replay_jobs (environment_id) WHERE status = 'running'`})
}

// MaxRunningReplayJobs is how many bulk replay jobs an environment may have running at
// once (CONTRACT §17).
const MaxRunningReplayJobs = 2

// ErrReplayJobLimit refuses a bulk replay job while the environment already has
// MaxRunningReplayJobs running. It comes wrapped in an *apperr.ConflictError with
// CodeReplayJobLimit.
var ErrReplayJobLimit = errors.New("too many running replay jobs")

// CodeReplayJobLimit is the error code of ErrReplayJobLimit.
const CodeReplayJobLimit = "replay_job_limit"

// JobFilter is the event filter a replay job was created with.
func JobFilter(j models.ReplayJob) EventFilter {
	before := j.CreatedBefore
	return EventFilter{Status: j.FilterStatus, Type: j.FilterType, EndpointID: j.FilterEndpointID,
		CreatedAfter: j.CreatedAfter, CreatedBefore: &before}
}

// JobEnv is the environment of a replay job (without its name, which queries don't need).
func JobEnv(j models.ReplayJob) Env {
	return Env{OrganizationID: j.OrganizationID, ID: j.EnvironmentID}
}

// CreateReplayJob records a running job for the deliveries matching f (CONTRACT §13:
// bulk replay matches deliveries) with how many it matches, and reply's answer (CONTRACT
// §14) in the same transaction. CreatedBefore is frozen at now at the latest, so events
// written later never join. A job matching nothing is done at once; a running one waits
// for its BulkReplay workflow (workflow_started_at unset until then).
//
// The job's slot is claimed before the deliveries are counted (CONTRACT §21, "counting
// before claiming"): an environment with MaxRunningReplayJobs running jobs gets
// ErrReplayJobLimit (§17) and never runs the count, the costly part. The slot is decided
// in the database: the running jobs are counted under the environment's replay-job lock
// (lockReplayJobs), held to the commit, so concurrent requests on any replica never make
// a third. A cheap count of running jobs before the lock refuses at once, without
// waiting, once two jobs have committed. The count of matched deliveries then runs
// under that lock, bounded by the request's statement timeout: the answer's matched, and
// its status done when nothing matches, are what an API user reads at once (§9).
func (s *Store) CreateReplayJob(ctx context.Context, env Env, f EventFilter, now time.Time, reply Keeper[models.ReplayJob]) (models.ReplayJob, error) {
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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.claimReplayJobSlot(tx, env); err != nil {
			return err
		}
		n, err := countReplayMatches(tx, env, f)
		if err != nil {
			return err
		}
		j.Matched = n
		if j.Matched == 0 {
			j.Status, j.FinishedAt = models.ReplayJobDone, &now
		}
		if err := tx.Create(&j).Error; err != nil {
			return fmt.Errorf("create replay job: %w", err)
		}
		return reply.Keep(s.txOf(tx, env), j)
	})
	return j, err
}

// claimReplayJobSlot claims one of the environment's MaxRunningReplayJobs slots in tx, or
// refuses with ErrReplayJobLimit: checked once without a lock (a refusal costs no wait),
// then again under lockReplayJobs, which the transaction holds until its job is inserted
// and committed.
func (s *Store) claimReplayJobSlot(tx *gorm.DB, env Env) error {
	if err := checkRunningJobs(tx, env); err != nil {
		return err
	}
	if err := s.lockReplayJobs(tx, env); err != nil {
		return err
	}
	return checkRunningJobs(tx, env)
}

// lockReplayJobs serialises the creation of the environment's replay jobs until tx ends.
// On PostgreSQL it is a transaction advisory lock of the environment's own, not the
// environment's row (lockEnv): that row's FOR UPDATE would block every insert that
// references the environment (its foreign keys take FOR KEY SHARE) — its deliveries'
// records among them — for as long as the count of a new job runs. A SQLite write
// transaction is exclusive already (_txlock=immediate).
func (s *Store) lockReplayJobs(tx *gorm.DB, env Env) error {
	if s.dialect != "postgres" {
		return nil
	}
	if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "replay_jobs:"+env.ID).Error; err != nil {
		return fmt.Errorf("lock replay jobs: %w", err)
	}
	return nil
}

// countReplayMatches counts the environment's deliveries matching f: a new job's matched.
func countReplayMatches(tx *gorm.DB, env Env, f EventFilter) (int, error) {
	var n int64
	if err := deliveryQuery(tx, env, f).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count deliveries to replay: %w", err)
	}
	return int(n), nil
}

// runningJobs counts the environment's running replay jobs.
func runningJobs(tx *gorm.DB, env Env) (int, error) {
	var n int64
	if err := scope(tx.Model(&models.ReplayJob{}), env).Where("status = ?", models.ReplayJobRunning).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count running replay jobs: %w", err)
	}
	return int(n), nil
}

// checkRunningJobs refuses a new job while the environment has MaxRunningReplayJobs
// running.
func checkRunningJobs(tx *gorm.DB, env Env) error {
	n, err := runningJobs(tx, env)
	if err != nil {
		return err
	}
	if n >= MaxRunningReplayJobs {
		return apperr.ConflictOn(ErrReplayJobLimit, CodeReplayJobLimit,
			"This environment already has %d bulk replay jobs running, the most it may have; wait for one to finish (GET /v1/events/replay/{id}).", n)
	}
	return nil
}

// ReplayJob loads one job of the environment.
func (s *Store) ReplayJob(ctx context.Context, env Env, id string) (models.ReplayJob, error) {
	var j models.ReplayJob
	if err := s.in(ctx, env).Where("id = ?", id).Take(&j).Error; err != nil {
		return j, notFound(err, "replay job "+id)
	}
	return j, nil
}

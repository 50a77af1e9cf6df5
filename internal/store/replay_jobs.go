package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 25, name: "replay_jobs", sql: scopedTable("replay_jobs", "id", `
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
CREATE INDEX replay_jobs_running ON replay_jobs (heartbeat_at) WHERE status = 'running'`)})
}

func init() {
	// The running jobs of one environment are counted by every new job (the limit of
	// CONTRACT §17) and by every page (the environment's share of REVOPS_REPLAY_RATE).
	register(migration{version: 81, name: "replay_jobs_env_running", sql: `
CREATE INDEX replay_jobs_env_running ON replay_jobs (environment_id) WHERE status = 'running'`})
}

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

// LockReplayJobs serialises the creation of the environment's replay jobs until the
// transaction ends (the job limit of CONTRACT §17 is counted under it). On PostgreSQL it
// is a transaction advisory lock of the environment's own, not the environment's row:
// that row's FOR UPDATE would block every insert that references the environment (its
// foreign keys take FOR KEY SHARE) — its deliveries' records among them — for as long as
// the count of a new job runs. A SQLite write transaction is exclusive already
// (_txlock=immediate).
func (tx *Tx) LockReplayJobs() error {
	if tx.dialect != "postgres" {
		return nil
	}
	if err := tx.db.Exec("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "replay_jobs:"+tx.env.ID).Error; err != nil {
		return fmt.Errorf("lock replay jobs: %w", err)
	}
	return nil
}

// RunningReplayJobs counts the environment's running replay jobs.
func (tx *Tx) RunningReplayJobs() (int, error) { return runningJobs(tx.db, tx.env) }

// CountDeliveries counts the environment's deliveries matching f (deliveryQuery's rule):
// a new replay job's matched.
func (tx *Tx) CountDeliveries(f EventFilter) (int, error) {
	var n int64
	if err := deliveryQuery(tx.db, tx.env, f).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count deliveries to replay: %w", err)
	}
	return int(n), nil
}

// InsertReplayJob writes a new replay job of the environment; a running one is a job
// whose BulkReplay workflow starts after commit (AfterCommit).
func (tx *Tx) InsertReplayJob(j *models.ReplayJob) error {
	j.OrganizationID, j.EnvironmentID = tx.env.OrganizationID, tx.env.ID
	if err := tx.db.Create(j).Error; err != nil {
		return fmt.Errorf("create replay job: %w", err)
	}
	if j.Status == models.ReplayJobRunning {
		tx.startJob(ReplayJobOf(*j))
	}
	return nil
}

// runningJobs counts the environment's running replay jobs.
func runningJobs(db *gorm.DB, env Env) (int, error) {
	var n int64
	if err := scope(db.Model(&models.ReplayJob{}), env).Where("status = ?", models.ReplayJobRunning).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count running replay jobs: %w", err)
	}
	return int(n), nil
}

// ReplayJob loads one job of the environment.
func (s *Store) ReplayJob(ctx context.Context, env Env, id string) (models.ReplayJob, error) {
	return takeRow[models.ReplayJob](s.in(ctx, env), "replay job "+id, "id = ?", id)
}

// ReplayJobByID loads a job by id alone, for the bulk replay activity: its id comes from
// the workflow input, which the API built from the stored row, never from a client.
func (s *Store) ReplayJobByID(ctx context.Context, id string) (models.ReplayJob, error) {
	return takeRow[models.ReplayJob](s.db.WithContext(ctx), "replay job "+id, "id = ?", id)
}

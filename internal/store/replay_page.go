package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

func init() {
	// Bulk replay runs as the BulkReplay workflow (CONTRACT §16): jobs are no longer
	// claimed by heartbeat, they wait for their workflow to be started.
	register(migration{version: 68, name: "replay_jobs_workflow", sql: `
ALTER TABLE replay_jobs ADD COLUMN workflow_started_at {{ts}};
DROP INDEX replay_jobs_running;
CREATE INDEX replay_jobs_unstarted ON replay_jobs (created_at) WHERE status = 'running' AND workflow_started_at IS NULL`})
}

// ClaimReplayPage takes the job's row for the page after cursorID (the cursor the
// caller holds, "" for the first) and says whether it is still to do: false when the
// job is done or its cursor has moved on (an earlier attempt did the page). The
// conditional update takes the row's write lock first (both databases), so a stale
// attempt of the same page waits, then finds the cursor moved.
func (tx *Tx) ClaimReplayPage(jobID, cursorID string) (bool, error) {
	claim := scope(tx.db.Model(&models.ReplayJob{}), tx.env).Where("id = ? AND status = ? AND cursor_id = ?", jobID, models.ReplayJobRunning, cursorID).
		Update("updated_at", tx.Now())
	if claim.Error != nil {
		return false, fmt.Errorf("claim page of replay job %s: %w", jobID, claim.Error)
	}
	return claim.RowsAffected > 0, nil
}

// ReplayJob reads one job of the environment in the transaction.
func (tx *Tx) ReplayJob(jobID string) (models.ReplayJob, error) {
	return takeRow[models.ReplayJob](scope(tx.db, tx.env), "replay job "+jobID, "id = ?", jobID)
}

// AdvanceReplayJob adds a page's counts to the job and moves its cursor to last (when
// the page had deliveries); done ends the job.
func (tx *Tx) AdvanceReplayJob(jobID string, replayed, failed int, last *models.WebhookDelivery, done bool) error {
	now := tx.Now()
	set := map[string]any{
		"replayed": gorm.Expr("replayed + ?", replayed), "failed": gorm.Expr("failed + ?", failed),
		"heartbeat_at": now, "updated_at": now,
	}
	if last != nil {
		set["cursor_at"], set["cursor_id"] = last.CreatedAt, last.ID
	}
	if done {
		set["status"], set["finished_at"] = models.ReplayJobDone, now
	}
	if err := scope(tx.db.Model(&models.ReplayJob{}), tx.env).Where("id = ?", jobID).Updates(set).Error; err != nil {
		return fmt.Errorf("advance replay job %s: %w", jobID, err)
	}
	return nil
}

// UnstartedReplayJobs lists, oldest first, up to limit running jobs of every environment
// created before `before` whose BulkReplay workflow was not started (the API could not
// reach Temporal). Only the worker's sweeper calls it: it works for all tenants.
func (s *Store) UnstartedReplayJobs(ctx context.Context, before time.Time, limit int) ([]models.ReplayJob, error) {
	return unstarted[models.ReplayJob](ctx, s.db, "list unstarted replay jobs", "created_at, id", limit,
		"status = ? AND workflow_started_at IS NULL AND created_at < ?", models.ReplayJobRunning, before)
}

// MarkReplayJobStarted records that the job's workflow was started.
func (s *Store) MarkReplayJobStarted(ctx context.Context, id string, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&models.ReplayJob{}).Where("id = ? AND workflow_started_at IS NULL", id).
		Update("workflow_started_at", at.UTC())
	if res.Error != nil {
		return fmt.Errorf("mark replay job %s started: %w", id, res.Error)
	}
	return nil
}

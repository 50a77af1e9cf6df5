package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

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

// CreateReplayJob counts the events matching f and records a running job for them.
// CreatedBefore is frozen at now at the latest, so events written later never join.
func (s *Store) CreateReplayJob(ctx context.Context, env Env, f EventFilter, now time.Time) (models.ReplayJob, error) {
	now = now.UTC().Truncate(time.Microsecond)
	if f.CreatedBefore == nil || f.CreatedBefore.After(now) {
		f.CreatedBefore = &now
	}
	matched, err := s.CountEvents(ctx, env, f)
	if err != nil {
		return models.ReplayJob{}, err
	}
	j := models.ReplayJob{
		ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
		Status: models.ReplayJobRunning, FilterStatus: f.Status, FilterType: f.Type, FilterEndpointID: f.EndpointID,
		CreatedAfter: f.CreatedAfter, CreatedBefore: *f.CreatedBefore, Matched: matched,
		HeartbeatAt: now, CreatedAt: now, UpdatedAt: now,
	}
	if matched == 0 {
		j.Status, j.FinishedAt = models.ReplayJobDone, &now
	}
	if err := s.db.WithContext(ctx).Create(&j).Error; err != nil {
		return j, fmt.Errorf("create replay job: %w", err)
	}
	return j, nil
}

// ReplayJob loads one job of the environment.
func (s *Store) ReplayJob(ctx context.Context, env Env, id string) (models.ReplayJob, error) {
	var j models.ReplayJob
	if err := s.in(ctx, env).Where("id = ?", id).Take(&j).Error; err != nil {
		return j, notFound(err, "replay job "+id)
	}
	return j, nil
}

// ReplayProgress is what one batch of a job did.
type ReplayProgress struct {
	Replayed, Failed int
	CursorAt         time.Time
	CursorID         string
}

// AdvanceReplayJob adds a batch's counts, moves the cursor past it and renews the
// owner's heartbeat, in one statement.
func (s *Store) AdvanceReplayJob(ctx context.Context, env Env, id string, p ReplayProgress, now time.Time) error {
	res := s.in(ctx, env).Model(&models.ReplayJob{}).Where("id = ?", id).Updates(map[string]any{
		"replayed": gorm.Expr("replayed + ?", p.Replayed), "failed": gorm.Expr("failed + ?", p.Failed),
		"cursor_at": p.CursorAt, "cursor_id": p.CursorID, "heartbeat_at": now, "updated_at": now,
	})
	if res.Error != nil {
		return fmt.Errorf("advance replay job %s: %w", id, res.Error)
	}
	return nil
}

// FinishReplayJob marks a job done.
func (s *Store) FinishReplayJob(ctx context.Context, env Env, id string, now time.Time) error {
	res := s.in(ctx, env).Model(&models.ReplayJob{}).Where("id = ?", id).Updates(map[string]any{
		"status": models.ReplayJobDone, "finished_at": now, "heartbeat_at": now, "updated_at": now,
	})
	if res.Error != nil {
		return fmt.Errorf("finish replay job %s: %w", id, res.Error)
	}
	return nil
}

// ClaimStaleReplayJobs takes over running jobs of every environment whose owner has
// shown no progress since staleBefore (its process died or restarted). Each claim is a
// conditional update, so two processes never both resume one job. Only the API's
// resumer calls it: like the sweeper, it works for all tenants.
func (s *Store) ClaimStaleReplayJobs(ctx context.Context, staleBefore, now time.Time, limit int) ([]models.ReplayJob, error) {
	var stale []models.ReplayJob
	err := s.db.WithContext(ctx).Where("status = ? AND heartbeat_at < ?", models.ReplayJobRunning, staleBefore).
		Order("heartbeat_at").Limit(limit).Find(&stale).Error
	if err != nil {
		return nil, fmt.Errorf("list stale replay jobs: %w", err)
	}
	var claimed []models.ReplayJob
	for _, j := range stale {
		res := s.db.WithContext(ctx).Model(&models.ReplayJob{}).
			Where("id = ? AND status = ? AND heartbeat_at < ?", j.ID, models.ReplayJobRunning, staleBefore).
			Updates(map[string]any{"heartbeat_at": now, "updated_at": now})
		if res.Error != nil {
			return claimed, fmt.Errorf("claim replay job %s: %w", j.ID, res.Error)
		}
		if res.RowsAffected == 1 {
			j.HeartbeatAt = now
			claimed = append(claimed, j)
		}
	}
	return claimed, nil
}

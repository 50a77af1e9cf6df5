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

// CreateReplayJob counts the deliveries matching f (CONTRACT §13: bulk replay matches
// deliveries) and records a running job for them, with reply's answer (CONTRACT §14) in
// the same transaction. CreatedBefore is frozen at now at the latest, so events written later
// never join. A job matching nothing is done at once; a running one waits for its
// BulkReplay workflow (workflow_started_at unset until then).
func (s *Store) CreateReplayJob(ctx context.Context, env Env, f EventFilter, now time.Time, reply Reply[models.ReplayJob]) (models.ReplayJob, error) {
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
		var n int64
		if err := deliveryQuery(tx, env, f).Count(&n).Error; err != nil {
			return fmt.Errorf("count deliveries to replay: %w", err)
		}
		j.Matched = int(n)
		if j.Matched == 0 {
			j.Status, j.FinishedAt = models.ReplayJobDone, &now
		}
		if err := tx.Create(&j).Error; err != nil {
			return fmt.Errorf("create replay job: %w", err)
		}
		return reply.keepIn(tx, j)
	})
	return j, err
}

// ReplayJob loads one job of the environment.
func (s *Store) ReplayJob(ctx context.Context, env Env, id string) (models.ReplayJob, error) {
	var j models.ReplayJob
	if err := s.in(ctx, env).Where("id = ?", id).Take(&j).Error; err != nil {
		return j, notFound(err, "replay job "+id)
	}
	return j, nil
}

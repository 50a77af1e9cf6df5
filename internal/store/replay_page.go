package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
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

// ReplayPageResult is what one page of a bulk replay did, and where the job stands after
// it (its row's totals and cursor).
type ReplayPageResult struct {
	Replayed, Failed int // this page; 0 when the page had already been done
	// The job's row after the page.
	TotalReplayed, TotalFailed, Matched int
	CursorAt                            *time.Time
	CursorID                            string
	Done                                bool
	// Running is how many jobs of the job's environment are running after the page, this
	// one included while it runs: they share REVOPS_REPLAY_RATE (CONTRACT §17).
	Running int
	// Events are the replayed events, marked for redispatch: the caller hands them to the
	// dispatcher after commit (the sweeper does it otherwise).
	Events []models.Event
}

// ReplayPage replays the next page of a bulk replay job — up to limit matching
// deliveries after the job's cursor, each as ReplayDeliveries(event, endpoint) does — and
// advances the job's cursor and counts, all in ONE transaction: a process killed
// mid-page did the whole page or nothing. The page is the one after cursorID (the
// cursor the caller holds, "" for the first): if the row's cursor has moved on, that page
// was already done by an earlier attempt whose answer was lost, and nothing is replayed
// again; the row's state is returned. A delivery that cannot be replayed (one in
// progress, its endpoint deleted) counts as failed; a database error fails the page.
// A page shorter than limit ends the job.
func (s *Store) ReplayPage(ctx context.Context, jobID, cursorID string, limit int) (ReplayPageResult, error) {
	var out ReplayPageResult
	now := changeTime()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The conditional update takes the row's write lock first (both databases), so a
		// stale attempt of the same page waits, then finds the cursor moved.
		claim := tx.Model(&models.ReplayJob{}).Where("id = ? AND status = ? AND cursor_id = ?", jobID, models.ReplayJobRunning, cursorID).
			Update("updated_at", now)
		if claim.Error != nil {
			return fmt.Errorf("claim page of replay job %s: %w", jobID, claim.Error)
		}
		var j models.ReplayJob
		if err := tx.Where("id = ?", jobID).Take(&j).Error; err != nil {
			return notFound(err, "replay job "+jobID)
		}
		if claim.RowsAffected == 0 {
			out = pageResult(j)
			return nil
		}
		// The page is read, and each replay runs, in this transaction (a replay in a
		// savepoint of it: a refused one undoes only itself).
		in := &Store{db: tx, dialect: s.dialect}
		env := JobEnv(j)
		page, err := in.DeliveriesAfter(ctx, env, JobFilter(j), j.CursorAt, j.CursorID, limit)
		if err != nil {
			return fmt.Errorf("page of replay job %s: %w", jobID, err)
		}
		seen := map[string]int{}
		for _, d := range page {
			ev, err := in.ReplayDeliveries(ctx, env, d.EventID, d.EndpointID)
			switch {
			case err == nil:
				out.Replayed++
				if i, ok := seen[ev.ID]; ok {
					out.Events[i] = ev
				} else {
					seen[ev.ID] = len(out.Events)
					out.Events = append(out.Events, ev)
				}
			case refused(err):
				out.Failed++
			default:
				return fmt.Errorf("replay job %s: %w", jobID, err)
			}
		}
		set := map[string]any{
			"replayed": gorm.Expr("replayed + ?", out.Replayed), "failed": gorm.Expr("failed + ?", out.Failed),
			"heartbeat_at": now, "updated_at": now,
		}
		if len(page) > 0 {
			last := page[len(page)-1]
			set["cursor_at"], set["cursor_id"] = last.CreatedAt, last.ID
		}
		if len(page) < limit {
			set["status"], set["finished_at"] = models.ReplayJobDone, now
		}
		if err := tx.Model(&models.ReplayJob{}).Where("id = ?", jobID).Updates(set).Error; err != nil {
			return fmt.Errorf("advance replay job %s: %w", jobID, err)
		}
		if err := tx.Where("id = ?", jobID).Take(&j).Error; err != nil {
			return fmt.Errorf("reload replay job %s: %w", jobID, err)
		}
		running, err := runningJobs(tx, env)
		if err != nil {
			return err
		}
		replayed, failed, events := out.Replayed, out.Failed, out.Events
		out = pageResult(j)
		out.Replayed, out.Failed, out.Events, out.Running = replayed, failed, events, running
		return nil
	})
	if err != nil {
		return ReplayPageResult{}, err
	}
	return out, nil
}

func pageResult(j models.ReplayJob) ReplayPageResult {
	return ReplayPageResult{TotalReplayed: j.Replayed, TotalFailed: j.Failed, Matched: j.Matched,
		CursorAt: j.CursorAt, CursorID: j.CursorID, Done: j.Status == models.ReplayJobDone}
}

// refused tells a replay the rules refuse (a client-side error: in progress, endpoint
// gone) from a failure of the database.
func refused(err error) bool {
	var c *apperr.ConflictError
	if errors.As(err, &c) || errors.Is(err, apperr.ErrNotFound) {
		return true
	}
	var r *apperr.InvalidError
	return errors.As(err, &r)
}

// UnstartedReplayJobs lists, oldest first, up to limit running jobs of every environment
// created before `before` whose BulkReplay workflow was not started (the API could not
// reach Temporal). Only the worker's sweeper calls it: it works for all tenants.
func (s *Store) UnstartedReplayJobs(ctx context.Context, before time.Time, limit int) ([]models.ReplayJob, error) {
	var jobs []models.ReplayJob
	err := s.db.WithContext(ctx).Where("status = ? AND workflow_started_at IS NULL AND created_at < ?", models.ReplayJobRunning, before).
		Order("created_at, id").Limit(limit).Find(&jobs).Error
	if err != nil {
		return nil, fmt.Errorf("list unstarted replay jobs: %w", err)
	}
	return jobs, nil
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

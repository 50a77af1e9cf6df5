package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

func init() {
	// Retention selects old rows by creation time across every environment: these
	// indexes serve it. Built concurrently on PostgreSQL, events being a live, large table.
	register(migration{version: 60, name: "retention_indexes", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS events_created ON events (created_at, id);
CREATE INDEX {{concurrently}} IF NOT EXISTS replay_jobs_created ON replay_jobs (created_at, id)`})
}

// Purged is what one retention batch deleted.
type Purged struct {
	// Rows is how many rows of the batch's own table it took; fewer than the limit means
	// nothing older is left.
	Rows int
	// Deleted counts the rows deleted per table (an event takes its deliveries and
	// attempts with it).
	Deleted map[string]int64
}

// Retention's batches run without the request pool's lock and statement timeouts (exempt,
// CONTRACT §21): they are bounded by their limit, and a purge that gave up would only leave
// the rows for the next run to find again.

// PurgeEvents deletes up to limit events created before before, with their deliveries
// and attempts, in one short transaction: the primary keys are picked first by the
// created_at index, then each table is deleted by those keys, so no statement scans or
// locks more than one batch. Usage is billing data and is never purged. An event with an
// unfinished delivery (one waiting in its order lane, CONTRACT §26, may be older than
// the retention) is kept with its deliveries until they end; the object_sequences rows
// are never purged (an object's numbers keep increasing).
//
// The endpoints' stats rollups of the hours before before's go with the attempts they
// count (CONTRACT §23), up to limit rows in a second short transaction; Rows is the
// larger of the two batches, so the retention run keeps calling while either has more.
func (s *Store) PurgeEvents(ctx context.Context, before time.Time, limit int) (Purged, error) {
	p, err := s.purge(ctx, `SELECT id FROM events WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
	WHERE d.event_id = events.id AND d.status IN ('pending', 'retrying')) ORDER BY created_at, id LIMIT ?`, before, limit,
		[]purgeStep{
			{"delivery_attempts", "DELETE FROM delivery_attempts WHERE event_id IN ?"},
			{"webhook_deliveries", "DELETE FROM webhook_deliveries WHERE event_id IN ?"},
			{"events", "DELETE FROM events WHERE id IN ?"},
		})
	if err != nil {
		return p, err
	}
	n, err := s.purgeStatRollups(ctx, before, limit)
	if err != nil {
		return Purged{}, err
	}
	p.Deleted["endpoint_stat_rollups"] = n
	p.Rows = max(p.Rows, int(n))
	return p, nil
}

// PurgeReplayJobs deletes up to limit finished replay jobs created before before. A job
// still running is left to finish.
func (s *Store) PurgeReplayJobs(ctx context.Context, before time.Time, limit int) (Purged, error) {
	return s.purge(ctx, "SELECT id FROM replay_jobs WHERE created_at < ? AND status <> 'running' ORDER BY created_at, id LIMIT ?", before, limit,
		[]purgeStep{{"replay_jobs", "DELETE FROM replay_jobs WHERE id IN ?"}})
}

// PurgeIdempotencyKeys deletes about limit idempotency records that expired before
// before (a record expires 24 h after it was written: CONTRACT §14). The table's key is
// composite, so the batch is bounded by expiry instead of by a list of keys: the
// limit-th oldest expiry bounds the DELETE (ties at that instant go in the same batch).
// A retention batch: a named exception to InTx, in a transaction of its own.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, before time.Time, limit int) (Purged, error) {
	p := Purged{Deleted: map[string]int64{}}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.exempt(tx); err != nil {
			return err
		}
		var bound []time.Time
		if err := tx.Raw(`SELECT expires_at FROM idempotency_keys WHERE expires_at < ?
			ORDER BY expires_at LIMIT 1 OFFSET ?`, before.UTC(), limit-1).Scan(&bound).Error; err != nil {
			return fmt.Errorf("select expired idempotency keys: %w", err)
		}
		q := tx.Where("expires_at < ?", before.UTC())
		if len(bound) == 1 {
			q = q.Where("expires_at <= ?", bound[0].UTC())
		}
		res := q.Delete(&idempotencyRow{})
		if res.Error != nil {
			return fmt.Errorf("delete expired idempotency keys: %w", res.Error)
		}
		p.Rows = int(res.RowsAffected)
		p.Deleted["idempotency_keys"] = res.RowsAffected
		return nil
	})
	return p, err
}

type purgeStep struct{ table, sql string }

// purge deletes one retention batch: the rows pick selects, then each step's rows of
// them. A named exception to InTx (a job's own bounded batch), in a transaction of its
// own.
func (s *Store) purge(ctx context.Context, pick string, before time.Time, limit int, steps []purgeStep) (Purged, error) {
	p := Purged{Deleted: map[string]int64{}}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.exempt(tx); err != nil {
			return err
		}
		var ids []string
		if err := tx.Raw(pick, before.UTC(), limit).Scan(&ids).Error; err != nil {
			return fmt.Errorf("select rows to purge: %w", err)
		}
		p.Rows = len(ids)
		if len(ids) == 0 {
			return nil
		}
		for _, st := range steps {
			res := tx.Exec(st.sql, ids)
			if res.Error != nil {
				return fmt.Errorf("purge %s: %w", st.table, res.Error)
			}
			p.Deleted[st.table] += res.RowsAffected
		}
		return nil
	})
	if err != nil {
		return Purged{}, err
	}
	return p, nil
}

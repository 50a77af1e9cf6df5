package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// waitingBatch is a batch the consumer or a backfill may take.
type waitingBatch struct {
	Seq          int64
	MetricsCount int
}

// takeRows keeps the batches, in order, up to maxRows rows (at least one batch).
func takeRows(bs []waitingBatch, maxRows int) []int64 {
	var seqs []int64
	rows := 0
	for _, b := range bs {
		if len(seqs) > 0 && rows+b.MetricsCount > maxRows {
			break
		}
		seqs, rows = append(seqs, b.Seq), rows+b.MetricsCount
	}
	return seqs
}

// meterRows reads the rows of the environment's batches seqs that one of meters counts.
// The statement names the batches only, not the environment (a batch seq is one
// environment's already): with environment_id in it, a planner working from a young
// table's statistics scanned the environment's rows by time once per batch, 50 s for
// 100,000 rows instead of 0.1 s. usage_events_batch is the one index it can use.
func (s *Store) meterRows(tx *gorm.DB, seqs []int64, meters []models.Meter) ([]UsageRow, error) {
	var names []string
	for _, m := range meters {
		if !slices.Contains(names, m.FilterMetricName) {
			names = append(names, m.FilterMetricName)
		}
	}
	var rows []UsageRow
	var err error
	if s.dialect == "postgres" {
		rows, err = scanUsageRows(tx.Statement.ConnPool.QueryContext(tx.Statement.Context, `SELECT `+usageRowColumns+`
			FROM unnest($1::bigint[]) AS b(seq), LATERAL (SELECT * FROM usage_events
				WHERE batch_seq = b.seq AND metric_name = ANY($2::text[]) OFFSET 0) AS e`, seqs, names))
	} else {
		rows, err = scanUsageRows(tx.Raw(`SELECT `+usageRowColumns+`
			FROM usage_events e WHERE batch_seq IN ? AND metric_name IN ?`, seqs, names).Rows())
	}
	if err != nil {
		return nil, fmt.Errorf("read usage rows of %d batches: %w", len(seqs), err)
	}
	return rows, nil
}

// WaitingUsageEnvironments lists environments with batches the consumer has not taken,
// the one waiting longest first (served by usage_batches_waiting, which holds only them).
func (s *Store) WaitingUsageEnvironments(ctx context.Context, limit int) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Raw(`SELECT environment_id FROM usage_batches WHERE gen IS NULL
		GROUP BY environment_id ORDER BY MIN(seq) LIMIT ?`, limit).
		Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("environments with waiting usage: %w", err)
	}
	return ids, nil
}

// ConsumeUsage takes the environment's waiting batches (oldest first, about maxRows rows)
// and, in one transaction under its usage cursor lock, counts their rows into every meter
// of the environment (apply) and stamps them with the next generation. It says how many
// batches it took: 0 when none waits or another consumer holds the environment.
func (s *Store) ConsumeUsage(ctx context.Context, envID string, maxRows int, apply MeterApply) (int, error) {
	var took int
	var mt *MeterTx
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cursor, err := s.lockCursor(tx, envID, true)
		if err != nil || cursor.Gen < 0 {
			return err
		}
		mt = s.meterTx(tx, envID, cursor)
		if took, err = s.consumeLocked(mt, maxRows, apply); err != nil {
			return err
		}
		return mt.finish()
	})
	if err == nil && mt != nil {
		mt.committed()
	}
	return took, err
}

// consumeLocked is ConsumeUsage's work in mt, whose transaction holds the environment's
// usage cursor.
func (s *Store) consumeLocked(mt *MeterTx, maxRows int, apply MeterApply) (int, error) {
	tx, envID := mt.db, mt.envID
	var waiting []waitingBatch
	if err := tx.Raw(`SELECT seq, metrics_count FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY seq LIMIT 1000`,
		envID).Scan(&waiting).Error; err != nil {
		return 0, fmt.Errorf("waiting usage batches: %w", err)
	}
	if len(waiting) == 0 {
		return 0, nil
	}
	seqs := takeRows(waiting, maxRows)
	var meters []models.Meter
	if err := tx.Where("environment_id = ?", envID).Find(&meters).Error; err != nil {
		return 0, fmt.Errorf("meters: %w", err)
	}
	if len(meters) > 0 {
		rows, err := s.meterRows(tx, seqs, meters)
		if err != nil {
			return 0, err
		}
		if err := apply(mt, meters, rows); err != nil {
			return 0, err
		}
	}
	gen := mt.cursor.Gen + 1
	if err := tx.Exec(`UPDATE usage_cursors SET gen = ? WHERE environment_id = ?`, gen, envID).Error; err != nil {
		return 0, fmt.Errorf("advance usage cursor: %w", err)
	}
	if err := tx.Exec(`UPDATE usage_batches SET gen = ? WHERE seq IN ?`, gen, seqs).Error; err != nil {
		return 0, fmt.Errorf("stamp usage batches: %w", err)
	}
	return len(seqs), nil
}

// BackfillMeterPage counts the meter's next page of backfill batches (about maxRows
// rows, in seq order) into it and advances its progress, in one transaction under the
// environment's usage cursor lock; with none left it marks the meter ready. A page that
// fails or whose worker dies commits nothing, so running it again counts each row once.
// done is true once the meter is ready; a deleted meter is apperr.ErrNotFound.
func (s *Store) BackfillMeterPage(ctx context.Context, meterID string, maxRows int, now time.Time, apply MeterApply) (done bool, rows int, err error) {
	var mt *MeterTx
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var m models.Meter
		if err := tx.Where("id = ?", meterID).Take(&m).Error; err != nil {
			return notFound(err, "meter "+meterID)
		}
		cursor, err := s.lockCursor(tx, m.EnvironmentID, false)
		if err != nil {
			return err
		}
		if err := tx.Where("id = ?", meterID).Take(&m).Error; err != nil { // as of the lock
			return notFound(err, "meter "+meterID)
		}
		if m.Status == models.MeterReady {
			done = true
			return nil
		}
		mt = s.meterTx(tx, m.EnvironmentID, cursor)
		if done, rows, err = s.backfillLocked(mt, m, maxRows, now, apply); err != nil {
			return err
		}
		return mt.finish()
	})
	if err == nil && mt != nil {
		mt.committed()
	}
	return done, rows, err
}

// backfillLocked is BackfillMeterPage's work in mt, whose transaction holds the meter's
// environment's usage cursor.
func (s *Store) backfillLocked(mt *MeterTx, m models.Meter, maxRows int, now time.Time, apply MeterApply) (done bool, rows int, err error) {
	tx := mt.db
	// Pages wait for the lock where the consumer skips it: back-to-back pages of
	// several backfills would keep it from the consumer, and as_of would stand still
	// for every meter of the environment. So a page also does the consumer's work.
	if _, err := s.consumeLocked(mt, maxRows, apply); err != nil {
		return false, 0, err
	}
	var batches []waitingBatch
	if err := tx.Raw(`SELECT seq, metrics_count FROM usage_batches
		WHERE environment_id = ? AND seq > ? AND gen IS NOT NULL AND gen <= ? ORDER BY seq LIMIT 1000`,
		m.EnvironmentID, m.BackfillSeq, m.BackfillGen).Scan(&batches).Error; err != nil {
		return false, 0, fmt.Errorf("backfill batches: %w", err)
	}
	if len(batches) == 0 {
		return true, 0, tx.Exec(`UPDATE meters SET status = ?, updated_at = ? WHERE id = ?`,
			models.MeterReady, now.UTC().Truncate(time.Microsecond), m.ID).Error
	}
	seqs := takeRows(batches, maxRows)
	got, err := s.meterRows(tx, seqs, []models.Meter{m})
	if err != nil {
		return false, 0, err
	}
	if err := apply(mt, []models.Meter{m}, got); err != nil {
		return false, 0, err
	}
	// Progress only: updated_at says when the meter's object last changed (ready).
	return false, len(got), tx.Exec(`UPDATE meters SET backfill_seq = ? WHERE id = ?`, seqs[len(seqs)-1], m.ID).Error
}

// MeterRows reads every stored usage row of an environment with the given metric name:
// the raw rows tests and operators recompute a meter's figures from (meters.Reference).
func (s *Store) MeterRows(ctx context.Context, envID, metricName string) ([]UsageRow, error) {
	rows, err := scanUsageRows(s.db.WithContext(ctx).Raw(`SELECT `+usageRowColumns+`
		FROM usage_events e WHERE environment_id = ? AND metric_name = ?`, envID, metricName).Rows())
	if err != nil {
		return nil, fmt.Errorf("usage rows of %s: %w", metricName, err)
	}
	return rows, nil
}

// usageRowColumns are the columns scanUsageRows reads.
const usageRowColumns = `e.id, e.batch_seq, e.account_id, e.product, e.metric_name, e.metric_value, e.metadata, e.timestamp`

// scanUsageRows reads usage rows by hand (the consumer reads tens of thousands at once).
// metric_value is read as text: exact on PostgreSQL (NUMERIC); SQLite's NUMERIC affinity
// stores what it can as an integer or a float, so it keeps 15–17 significant digits
// (docs/meters.md).
func scanUsageRows(rows *sql.Rows, err error) ([]UsageRow, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UsageRow
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(&r.ID, &r.BatchSeq, &r.AccountID, &r.Product, &r.MetricName, &r.MetricValue, &r.Metadata, &r.Timestamp); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

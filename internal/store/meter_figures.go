package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// MeterTx is the transaction of a consumer or backfill page: it reads and writes a
// meter's kept figures while holding the environment's usage cursor lock, so that
// figures are read, combined (in Go, exactly, on both databases) and written back by one
// transaction at a time per environment.
type MeterTx struct {
	db      *gorm.DB
	dialect string
}

// FigureKey names one kept figure of a meter.
type FigureKey struct {
	Kind        string
	WindowStart time.Time
	AccountID   string
	Groups      string
}

// MemberKey names one distinct value of a unique_count meter, for one account and group.
type MemberKey struct {
	AccountID, Groups, Member string
}

// UsageRow is a stored usage row as meters read it.
type UsageRow struct {
	ID          string
	BatchSeq    int64
	AccountID   string
	Product     string
	MetricName  string
	MetricValue string
	Metadata    string
	Timestamp   time.Time
}

// MeterApply counts rows (of batches nobody counted into these meters yet) into meters.
type MeterApply func(tx *MeterTx, meters []models.Meter, rows []UsageRow) error

// lookupChunk bounds the keys of one lookup statement.
const lookupChunk = 500

// Figures reads the kept figures of meterID with the given keys (missing ones are absent).
func (t *MeterTx) Figures(meterID string, keys []FigureKey) ([]models.MeterFigure, error) {
	var out []models.MeterFigure
	for start := 0; start < len(keys); start += lookupChunk {
		part := keys[start:min(start+lookupChunk, len(keys))]
		var sb strings.Builder
		args := []any{meterID}
		for i, k := range part {
			if i > 0 {
				sb.WriteString(" OR ")
			}
			sb.WriteString("(kind = ? AND account_id = ? AND window_start = ? AND groups = ?)")
			args = append(args, k.Kind, k.AccountID, k.WindowStart, k.Groups)
		}
		var got []models.MeterFigure
		if err := t.db.Raw(`SELECT * FROM meter_figures WHERE meter_id = ? AND (`+sb.String()+`)`, args...).
			Scan(&got).Error; err != nil {
			return nil, fmt.Errorf("read meter figures: %w", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// SaveFigures writes figures, replacing the kept ones with the same key.
func (t *MeterTx) SaveFigures(fs []models.MeterFigure) error {
	const cols = 12
	for start := 0; start < len(fs); start += lookupChunk {
		part := fs[start:min(start+lookupChunk, len(fs))]
		args := make([]any, 0, len(part)*cols)
		for i := range part {
			f := &part[i]
			args = append(args, f.MeterID, f.Kind, f.WindowStart, f.AccountID, f.Groups, f.G1, f.G2, f.G3,
				f.Value, f.LatestTS, f.LatestSeq, f.LatestID)
		}
		err := t.db.Exec(`INSERT INTO meter_figures
			(meter_id, kind, window_start, account_id, groups, g1, g2, g3, value, latest_ts, latest_seq, latest_id)
			VALUES `+placeholdersFor(t.dialect, len(part), cols)+`
			ON CONFLICT (meter_id, kind, account_id, window_start, groups) DO UPDATE SET
			value = excluded.value, latest_ts = excluded.latest_ts, latest_seq = excluded.latest_seq,
			latest_id = excluded.latest_id`, args...).Error
		if err != nil {
			return fmt.Errorf("write %d meter figures: %w", len(part), err)
		}
	}
	return nil
}

// Members reads the kept days of the given distinct values of meterID on days in
// [from, to).
func (t *MeterTx) Members(meterID string, keys []MemberKey, from, to time.Time) ([]models.MeterMember, error) {
	var out []models.MeterMember
	for start := 0; start < len(keys); start += lookupChunk {
		part := keys[start:min(start+lookupChunk, len(keys))]
		var sb strings.Builder
		args := []any{meterID, from, to}
		for i, k := range part {
			if i > 0 {
				sb.WriteString(" OR ")
			}
			sb.WriteString("(account_id = ? AND groups = ? AND member = ?)")
			args = append(args, k.AccountID, k.Groups, k.Member)
		}
		var got []models.MeterMember
		if err := t.db.Raw(`SELECT * FROM meter_members WHERE meter_id = ? AND day >= ? AND day < ? AND (`+sb.String()+`)`, args...).
			Scan(&got).Error; err != nil {
			return nil, fmt.Errorf("read meter members: %w", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// SaveMembers writes member days, replacing the kept ones with the same key.
func (t *MeterTx) SaveMembers(ms []models.MeterMember) error {
	const cols = 6
	for start := 0; start < len(ms); start += lookupChunk {
		part := ms[start:min(start+lookupChunk, len(ms))]
		args := make([]any, 0, len(part)*cols)
		for i := range part {
			m := &part[i]
			args = append(args, m.MeterID, m.AccountID, m.Groups, m.Member, m.Day, m.Minutes)
		}
		err := t.db.Exec(`INSERT INTO meter_members (meter_id, account_id, groups, member, day, minutes)
			VALUES `+placeholdersFor(t.dialect, len(part), cols)+`
			ON CONFLICT (meter_id, account_id, groups, member, day) DO UPDATE SET minutes = excluded.minutes`, args...).Error
		if err != nil {
			return fmt.Errorf("write %d meter members: %w", len(part), err)
		}
	}
	return nil
}

// placeholdersFor is placeholders for GORM's Exec, which rewrites "?" for either dialect.
func placeholdersFor(_ string, rows, cols int) string { return placeholders(rows, cols) }

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

// meterRows reads the rows of the batches seqs that one of meters counts.
func meterRows(tx *gorm.DB, envID string, seqs []int64, meters []models.Meter) ([]UsageRow, error) {
	names := make([]string, 0, len(meters))
	for _, m := range meters {
		names = append(names, m.FilterMetricName)
	}
	var rows []UsageRow
	err := tx.Raw(`SELECT id, batch_seq, account_id, product, metric_name, metric_value, metadata, timestamp
		FROM usage_events WHERE batch_seq IN ? AND environment_id = ? AND metric_name IN ?`, seqs, envID, names).
		Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read usage rows of %d batches: %w", len(seqs), err)
	}
	return rows, nil
}

// WaitingUsageEnvironments lists environments with batches the consumer has not taken.
func (s *Store) WaitingUsageEnvironments(ctx context.Context, limit int) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT environment_id FROM usage_batches WHERE gen IS NULL LIMIT ?`, limit).
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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		gen, err := s.lockUsageCursor(tx, envID, true)
		if err != nil || gen < 0 {
			return err
		}
		var waiting []waitingBatch
		if err := tx.Raw(`SELECT seq, metrics_count FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY seq LIMIT 1000`,
			envID).Scan(&waiting).Error; err != nil {
			return fmt.Errorf("waiting usage batches: %w", err)
		}
		if len(waiting) == 0 {
			return nil
		}
		seqs := takeRows(waiting, maxRows)
		var meters []models.Meter
		if err := tx.Where("environment_id = ?", envID).Find(&meters).Error; err != nil {
			return fmt.Errorf("meters: %w", err)
		}
		if len(meters) > 0 {
			rows, err := meterRows(tx, envID, seqs, meters)
			if err != nil {
				return err
			}
			if err := apply(&MeterTx{db: tx, dialect: s.dialect}, meters, rows); err != nil {
				return err
			}
		}
		gen++
		if err := tx.Exec(`UPDATE usage_cursors SET gen = ? WHERE environment_id = ?`, gen, envID).Error; err != nil {
			return fmt.Errorf("advance usage cursor: %w", err)
		}
		if err := tx.Exec(`UPDATE usage_batches SET gen = ? WHERE seq IN ?`, gen, seqs).Error; err != nil {
			return fmt.Errorf("stamp usage batches: %w", err)
		}
		took = len(seqs)
		return nil
	})
	return took, err
}

// BackfillMeterPage counts the meter's next page of backfill batches (about maxRows
// rows, in seq order) into it and advances its progress, in one transaction under the
// environment's usage cursor lock; with none left it marks the meter ready. A page that
// fails or whose worker dies commits nothing, so running it again counts each row once.
// done is true once the meter is ready; a deleted meter is apperr.ErrNotFound.
func (s *Store) BackfillMeterPage(ctx context.Context, meterID string, maxRows int, now time.Time, apply MeterApply) (done bool, rows int, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var m models.Meter
		if err := tx.Where("id = ?", meterID).Take(&m).Error; err != nil {
			return notFound(err, "meter "+meterID)
		}
		if _, err := s.lockUsageCursor(tx, m.EnvironmentID, false); err != nil {
			return err
		}
		if err := tx.Where("id = ?", meterID).Take(&m).Error; err != nil { // as of the lock
			return notFound(err, "meter "+meterID)
		}
		if m.Status == models.MeterReady {
			done = true
			return nil
		}
		var batches []waitingBatch
		if err := tx.Raw(`SELECT seq, metrics_count FROM usage_batches
			WHERE environment_id = ? AND seq > ? AND gen IS NOT NULL AND gen <= ? ORDER BY seq LIMIT 1000`,
			m.EnvironmentID, m.BackfillSeq, m.BackfillGen).Scan(&batches).Error; err != nil {
			return fmt.Errorf("backfill batches: %w", err)
		}
		now = now.UTC().Truncate(time.Microsecond)
		if len(batches) == 0 {
			done = true
			return tx.Exec(`UPDATE meters SET status = ?, updated_at = ? WHERE id = ?`, models.MeterReady, now, m.ID).Error
		}
		seqs := takeRows(batches, maxRows)
		got, err := meterRows(tx, m.EnvironmentID, seqs, []models.Meter{m})
		if err != nil {
			return err
		}
		if err := apply(&MeterTx{db: tx, dialect: s.dialect}, []models.Meter{m}, got); err != nil {
			return err
		}
		rows = len(got)
		return tx.Exec(`UPDATE meters SET backfill_seq = ?, updated_at = ? WHERE id = ?`, seqs[len(seqs)-1], now, m.ID).Error
	})
	return done, rows, err
}

// MeterAsOf is the time before which every accepted usage row is counted in m's figures
// (CONTRACT §18): the receipt time of the oldest batch the consumer has not taken, or of
// the oldest batch m's backfill has not counted, or now when there is none.
func (s *Store) MeterAsOf(ctx context.Context, m models.Meter, now time.Time) (time.Time, error) {
	asOf := now.UTC()
	var oldest []time.Time
	if err := s.db.WithContext(ctx).Raw(`SELECT received_at FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY received_at LIMIT 1`,
		m.EnvironmentID).Scan(&oldest).Error; err != nil {
		return asOf, fmt.Errorf("oldest waiting usage batch: %w", err)
	}
	if m.Status == models.MeterBackfilling {
		var first []time.Time
		if err := s.db.WithContext(ctx).Raw(`SELECT received_at FROM usage_batches
			WHERE environment_id = ? AND seq > ? AND gen IS NOT NULL AND gen <= ? ORDER BY received_at LIMIT 1`,
			m.EnvironmentID, m.BackfillSeq, m.BackfillGen).Scan(&first).Error; err != nil {
			return asOf, fmt.Errorf("oldest batch to backfill: %w", err)
		}
		oldest = append(oldest, first...)
	}
	for _, t := range oldest {
		if !t.IsZero() && t.Before(asOf) {
			asOf = t.UTC()
		}
	}
	return asOf, nil
}

// FigureQuery selects kept figures of one meter and kind: window starts in [From, To),
// one account or all, and group values (index into the meter's group_by → canonical text).
type FigureQuery struct {
	MeterID   string
	Kind      string
	From, To  time.Time
	AccountID string
	Filters   map[int]string
}

// MeterFigures reads the figures q selects, ordered by window start, account and group.
func (s *Store) MeterFigures(ctx context.Context, q FigureQuery) ([]models.MeterFigure, error) {
	db := s.db.WithContext(ctx).Table("meter_figures").
		Where("meter_id = ? AND kind = ? AND window_start >= ? AND window_start < ?", q.MeterID, q.Kind, q.From, q.To)
	if q.AccountID != "" {
		db = db.Where("account_id = ?", q.AccountID)
	}
	for i, v := range q.Filters {
		db = db.Where(fmt.Sprintf("g%d = ?", i+1), v)
	}
	var fs []models.MeterFigure
	if err := db.Order("window_start, account_id, groups").Find(&fs).Error; err != nil {
		return nil, fmt.Errorf("meter figures: %w", err)
	}
	return fs, nil
}

// MeterRows reads every stored usage row of an environment with the given metric name:
// the raw rows tests and operators recompute a meter's figures from (meters.Reference).
func (s *Store) MeterRows(ctx context.Context, envID, metricName string) ([]UsageRow, error) {
	var rows []UsageRow
	err := s.db.WithContext(ctx).Raw(`SELECT id, batch_seq, account_id, product, metric_name, metric_value, metadata, timestamp
		FROM usage_events WHERE environment_id = ? AND metric_name = ?`, envID, metricName).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("usage rows of %s: %w", metricName, err)
	}
	return rows, nil
}

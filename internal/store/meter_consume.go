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

// The store side of meter steps (CONTRACT §18, §21): a consumer step or a backfill page
// is one transaction (InTx) that holds its environment's usage cursor (LockUsageCursor),
// in which the meters package reads what it decides to take (WaitingBatches,
// BackfillBatches, UsageRows), counts it, and records how far it got (Advance,
// SaveBackfill). The store stores; what a step takes, and within which budget, is the
// meters package's choice.

// CursorLock is how a transaction takes its environment's usage cursor.
type CursorLock int

const (
	// SkipBusy runs nothing, at once, when another transaction holds the cursor: jobs
	// (the consumer, backfill pages) never wait for each other or hold a connection while
	// waiting; the one that holds it is busy with the same environment.
	SkipBusy CursorLock = iota
	// Wait waits for the cursor: requests (creating or deleting a meter), bounded by the
	// request's lock timeout.
	Wait
)

// UsageCursor is an environment's usage_cursors row: the generation of the batches taken
// last, how many transactions wrote meter figures (the figure cache is as of it), and
// the batch being applied in parts (PartSeq 0: none): its rows up to id PartAfter are
// counted.
type UsageCursor struct {
	Gen       int64
	Writes    int64
	PartSeq   int64
	PartAfter string
}

// lockCursor locks envID's cursor row until tx ends, creating it first if the
// environment has none (SQLite's write transaction is exclusive: nothing to lock).
// held is false when lock is SkipBusy and another transaction holds it. The row is read
// (and skipped) before any insert: an INSERT … ON CONFLICT DO NOTHING against a row
// another transaction has updated waits for that transaction, SKIP LOCKED or not.
func lockCursor(tx *gorm.DB, dialect, envID string, lock CursorLock) (c UsageCursor, held bool, err error) {
	q := lockCursorSQLite
	if dialect == "postgres" {
		q = lockCursorPG(lock)
	}
	read := func() (bool, error) {
		var got []UsageCursor
		if err := tx.Raw(q, envID).Scan(&got).Error; err != nil {
			return false, fmt.Errorf("lock usage cursor: %w", err)
		}
		if len(got) == 0 {
			return false, nil
		}
		c = got[0]
		return true, nil
	}
	if held, err = read(); err != nil || held {
		return c, held, err
	}
	var exists int64
	if err := tx.Raw(`SELECT COUNT(*) FROM usage_cursors WHERE environment_id = ?`, envID).Scan(&exists).Error; err != nil {
		return c, false, fmt.Errorf("find usage cursor: %w", err)
	}
	if exists > 0 { // skipped: another transaction holds it
		return c, false, nil
	}
	if err := tx.Exec(`INSERT INTO usage_cursors (environment_id, gen) VALUES (?, 0) ON CONFLICT (environment_id) DO NOTHING`,
		envID).Error; err != nil {
		return c, false, fmt.Errorf("create usage cursor: %w", err)
	}
	held, err = read()
	return c, held, err
}

// lockCursorSQL reads an environment's cursor row (lockCursorPG, lockCursorSQLite).
const lockCursorSQL = `SELECT gen, writes, part_seq, part_after FROM usage_cursors WHERE environment_id = ?`

// LockUsageCursor takes the environment's usage cursor until the transaction ends: with
// Wait (requests: creating or deleting a meter) up to the lock timeout; with SkipBusy
// (meter work) held is false at once, and nothing is locked, when another transaction
// holds it. Once held, the verbs of meter work may run: the figures are read through
// the process's cache as of the cursor's count of writes, and what the transaction
// writes reaches the caches when it commits (InTx).
func (tx *Tx) LockUsageCursor(lock CursorLock) (c UsageCursor, held bool, err error) {
	if tx.meter != nil {
		return tx.meter.cursor, true, nil
	}
	if c, held, err = lockCursor(tx.db, tx.dialect, tx.env.ID, lock); err != nil || !held {
		return c, held, err
	}
	tx.meter = &meterWork{cursor: c, view: tx.figures.view(tx.env.ID, c.Writes)}
	return c, true, nil
}

// UsageCursor is the environment's usage cursor as this transaction holds it (Advance
// moves it); the zero cursor when it holds none.
func (tx *Tx) UsageCursor() UsageCursor {
	if tx.meter == nil {
		return UsageCursor{}
	}
	return tx.meter.cursor
}

// Meters lists the environment's meters as of the lock: a meter created or deleted
// takes the same lock, so the list cannot change before the transaction ends but by the
// transaction's own progress (SaveBackfill, MarkMeterReady), which reads it again. The
// caller gets its own copy.
func (tx *Tx) Meters() ([]models.Meter, error) {
	w, err := tx.work()
	if err != nil {
		return nil, err
	}
	if w.meters == nil {
		var ms []models.Meter
		if err := scope(tx.db, tx.env).Order("created_at, id").Find(&ms).Error; err != nil {
			return nil, fmt.Errorf("meters: %w", err)
		}
		w.meters = ms
	}
	return slices.Clone(w.meters), nil
}

// MeterByID reads one of the environment's meters, as of the lock when the transaction
// holds the usage cursor.
func (tx *Tx) MeterByID(id string) (models.Meter, error) {
	return takeRow[models.Meter](scope(tx.db, tx.env), "meter "+id, "id = ?", id)
}

// Batch is a usage batch as meter steps take it.
type Batch struct {
	Seq          int64
	MetricsCount int
	ReceivedAt   time.Time
}

// WaitingBatches lists up to limit batches the consumer has not taken, in seq order.
func (tx *Tx) WaitingBatches(limit int) ([]Batch, error) {
	var bs []Batch
	if err := tx.db.Raw(`SELECT seq, metrics_count, received_at FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY seq LIMIT ?`,
		tx.env.ID, limit).Scan(&bs).Error; err != nil {
		return nil, fmt.Errorf("waiting usage batches: %w", err)
	}
	return bs, nil
}

// Batch reads one of the environment's batches (the one the consumer applies in parts,
// a meter's part to backfill, or where a new meter's backfill starts).
func (tx *Tx) Batch(seq int64) (Batch, error) { return batchBySeq(tx.db, tx.env.ID, seq) }

// batchBySeq reads envID's batch seq in db's transaction.
func batchBySeq(db *gorm.DB, envID string, seq int64) (Batch, error) {
	var bs []Batch
	if err := db.Raw(`SELECT seq, metrics_count, received_at FROM usage_batches WHERE environment_id = ? AND seq = ?`,
		envID, seq).Scan(&bs).Error; err != nil {
		return Batch{}, fmt.Errorf("usage batch %d: %w", seq, err)
	}
	if len(bs) == 0 {
		return Batch{}, fmt.Errorf("usage batch %d: missing", seq)
	}
	return bs[0], nil
}

// BackfillBatches lists up to limit of m's batches to backfill after its progress, in
// seq order: those the consumer had taken when m was created (gen at most BackfillGen).
func (tx *Tx) BackfillBatches(m models.Meter, limit int) ([]Batch, error) {
	var bs []Batch
	if err := tx.db.Raw(`SELECT seq, metrics_count, received_at FROM usage_batches
		WHERE environment_id = ? AND seq > ? AND gen IS NOT NULL AND gen <= ? ORDER BY seq LIMIT ?`,
		tx.env.ID, m.BackfillSeq, m.BackfillGen, limit).Scan(&bs).Error; err != nil {
		return nil, fmt.Errorf("backfill batches: %w", err)
	}
	return bs, nil
}

// OldestToBackfill is the receipt time of the oldest batch m's backfill has left after
// batch afterSeq, looked for from notBefore on (nil: none left). Batches are backfilled
// in seq order, which receipt order follows but for requests in flight together, so
// from the previous answer on this reads about the batches of one page.
func (tx *Tx) OldestToBackfill(m models.Meter, afterSeq int64, notBefore time.Time) (*time.Time, error) {
	var got []time.Time
	if err := tx.db.Raw(`SELECT received_at FROM usage_batches WHERE environment_id = ? AND received_at >= ? AND seq > ?
		AND gen IS NOT NULL AND gen <= ? ORDER BY received_at LIMIT 1`,
		tx.env.ID, notBefore.UTC(), afterSeq, m.BackfillGen).Scan(&got).Error; err != nil {
		return nil, fmt.Errorf("oldest batch to backfill: %w", err)
	}
	if len(got) == 0 {
		return nil, nil
	}
	at := got[0].UTC()
	return &at, nil
}

// RowQuery selects the usage rows a meter step counts: the rows of Batches (ascending
// seq) after id AfterID in the first of them, of MetricNames, in (batch, id) order (ids
// compared bytewise, as Go compares strings), at
// most MaxRows of them (0: all). Of metadata only Keys are read ("{}" when none; on
// PostgreSQL values that cannot be a dimension — objects, arrays, texts over 255
// characters — are left out too), so a row costs its own size, not its metadata's.
type RowQuery struct {
	Batches     []int64
	AfterID     string
	MetricNames []string
	Keys        []string
	MaxRows     int
}

// UsageRows reads the rows q selects. Reading stops before a row that would take the
// bytes read past maxBytes (0: no bound), after at least one row; more says a row was
// left (by either bound), so that the caller knows the last batch read may be partial.
func (tx *Tx) UsageRows(q RowQuery, maxBytes int) (rows []UsageRow, more bool, err error) {
	if len(q.Batches) == 0 {
		return nil, false, nil
	}
	limit := q.MaxRows + 1 // one more, to know whether rows are left
	if q.MaxRows <= 0 {
		limit = -1
	}
	var res *sql.Rows
	if tx.dialect == "postgres" {
		res, err = usageRowsPG(tx.db, q, limit)
	} else {
		res, err = usageRowsSQLite(tx.db, q, limit)
	}
	if err != nil {
		return nil, false, fmt.Errorf("read usage rows of %d batches: %w", len(q.Batches), err)
	}
	defer res.Close()
	bytes := 0
	for res.Next() {
		var r UsageRow
		if err := scanUsageRow(res, &r); err != nil {
			return nil, false, fmt.Errorf("read usage row: %w", err)
		}
		size := len(r.ID) + len(r.AccountID) + len(r.Product) + len(r.MetricName) + len(r.MetricValue) + len(r.Metadata) + 64
		if len(rows) > 0 && ((q.MaxRows > 0 && len(rows) == q.MaxRows) || (maxBytes > 0 && bytes+size > maxBytes)) {
			return rows, true, nil
		}
		bytes += size
		rows = append(rows, r)
	}
	if err := res.Err(); err != nil {
		return nil, false, fmt.Errorf("read usage rows: %w", err)
	}
	return rows, false, nil
}

// Advance records a consumer step: done, the batches it counted whole, are stamped with
// the cursor's next generation; part is the batch it counted up to id partAfter (partSeq
// 0: none), which stays waiting.
func (tx *Tx) Advance(done []int64, partSeq int64, partAfter string) error {
	w, err := tx.work()
	if err != nil {
		return err
	}
	c := w.cursor
	if len(done) > 0 {
		c.Gen++
		if err := tx.db.Exec(`UPDATE usage_batches SET gen = ? WHERE seq IN ?`, c.Gen, done).Error; err != nil {
			return fmt.Errorf("stamp usage batches: %w", err)
		}
	}
	c.PartSeq, c.PartAfter = partSeq, partAfter
	if c == w.cursor {
		return nil
	}
	if err := tx.db.Exec(`UPDATE usage_cursors SET gen = ?, part_seq = ?, part_after = ? WHERE environment_id = ?`,
		c.Gen, c.PartSeq, c.PartAfter, tx.env.ID).Error; err != nil {
		return fmt.Errorf("advance usage cursor: %w", err)
	}
	w.cursor.Gen, w.cursor.PartSeq, w.cursor.PartAfter = c.Gen, c.PartSeq, c.PartAfter
	return nil
}

// SaveBackfill records a backfill page's progress: m's backfill_seq, part and as-of.
// Progress only: updated_at says when the meter's object last changed (ready).
func (tx *Tx) SaveBackfill(m models.Meter) error {
	w, err := tx.work()
	if err != nil {
		return err
	}
	err = tx.db.Exec(`UPDATE meters SET backfill_seq = ?, backfill_part_seq = ?, backfill_part_after = ?, backfill_as_of = ? WHERE id = ? AND environment_id = ?`,
		m.BackfillSeq, m.BackfillPartSeq, m.BackfillPartAfter, m.BackfillAsOf, m.ID, tx.env.ID).Error
	if err != nil {
		return fmt.Errorf("save backfill progress of meter %s: %w", m.ID, err)
	}
	w.meters = nil
	return nil
}

// MarkMeterReady ends m's backfill.
func (tx *Tx) MarkMeterReady(m models.Meter, now time.Time) error {
	w, err := tx.work()
	if err != nil {
		return err
	}
	err = tx.db.Exec(`UPDATE meters SET status = ?, backfill_as_of = NULL, backfill_part_seq = 0, backfill_part_after = '', updated_at = ? WHERE id = ? AND environment_id = ?`,
		models.MeterReady, now.UTC().Truncate(time.Microsecond), m.ID, tx.env.ID).Error
	if err != nil {
		return fmt.Errorf("mark meter %s ready: %w", m.ID, err)
	}
	w.meters = nil
	return nil
}

// WaitingUsageEnvironments lists up to limit environments with batches the consumer has
// not taken, but those of except (the consumer's line holds them already), the one
// waiting longest first (served by usage_batches_waiting, which holds only them).
func (s *Store) WaitingUsageEnvironments(ctx context.Context, except []string, limit int) ([]string, error) {
	q := s.db.WithContext(ctx).Table("usage_batches").Select("environment_id").Where("gen IS NULL")
	if len(except) > 0 {
		q = q.Where("environment_id NOT IN ?", except)
	}
	var ids []string
	if err := q.Group("environment_id").Order("MIN(seq)").Limit(limit).Scan(&ids).Error; err != nil {
		return nil, fmt.Errorf("environments with waiting usage: %w", err)
	}
	return ids, nil
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

// scanUsageRows reads usage rows by hand. metric_value is read as text: exact on
// PostgreSQL (NUMERIC); SQLite's NUMERIC affinity stores what it can as an integer or a
// float, so it keeps 15–17 significant digits (docs/meters.md).
func scanUsageRows(rows *sql.Rows, err error) ([]UsageRow, error) {
	return scanAll(rows, err, "usage rows", scanUsageRow)
}

// scanUsageRow reads usageRowColumns (or what a step selects in their place).
func scanUsageRow(rows *sql.Rows, r *UsageRow) error {
	return rows.Scan(&r.ID, &r.BatchSeq, &r.AccountID, &r.Product, &r.MetricName, &r.MetricValue, &r.Metadata, &r.Timestamp)
}

// scanAll reads every row of a query by hand with scan (reflection per row would cost
// more than the query), what naming them in errors. PostgreSQL's statements go straight
// to the connection, past GORM's error translation, and a timeout may come with a later
// row: both errors go through dbError.
func scanAll[T any](rows *sql.Rows, err error, what string, scan func(*sql.Rows, *T) error) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, dbError(err))
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		out = append(out, v)
	}
	return out, dbError(rows.Err())
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// Usage tables. usage_batches.seq is the ingest sequence (BIGSERIAL; SQLite's rowid).
// usage_events has no foreign keys and two secondary indexes only: every index costs on
// the ingest path (docs/benchmarks.md explains the choice). Rollups are keyed by their
// natural key, which is the primary key.
func init() {
	register(migration{version: 10, name: "usage", sql: `
CREATE TABLE usage_batches (
	seq {{serial}} PRIMARY KEY,
	environment_id TEXT NOT NULL REFERENCES environments(id),
	transaction_id TEXT NOT NULL,
	mode TEXT NOT NULL CHECK (mode IN ('increment', 'set')),
	body_hash TEXT NOT NULL,
	response TEXT NOT NULL,
	metrics_count INTEGER NOT NULL,
	received_at {{ts}} NOT NULL,
	created_at {{ts}} NOT NULL,
	UNIQUE (environment_id, transaction_id)
);
CREATE TABLE usage_events (
	id TEXT PRIMARY KEY,
	environment_id TEXT NOT NULL,
	batch_seq BIGINT NOT NULL,
	transaction_id TEXT NOT NULL,
	mode TEXT NOT NULL,
	account_id TEXT NOT NULL,
	product TEXT NOT NULL,
	metric_name TEXT NOT NULL,
	metric_value {{num}} NOT NULL,
	metric_resolution TEXT NOT NULL,
	metadata {{json}} NOT NULL,
	timestamp {{ts}} NOT NULL,
	received_at {{ts}} NOT NULL,
	created_at {{ts}} NOT NULL
);
CREATE INDEX usage_events_list ON usage_events (environment_id, created_at, id);
CREATE INDEX usage_events_account ON usage_events (environment_id, account_id, timestamp);
CREATE TABLE usage_rollups (
	environment_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	product TEXT NOT NULL,
	metric_name TEXT NOT NULL,
	resolution TEXT NOT NULL,
	period_start {{ts}} NOT NULL,
	value {{num}} NOT NULL,
	set_seq BIGINT NOT NULL DEFAULT 0,
	updated_at {{ts}} NOT NULL,
	PRIMARY KEY (environment_id, account_id, product, metric_name, resolution, period_start)
);
CREATE INDEX usage_rollups_period ON usage_rollups (environment_id, resolution, period_start)`})
}

// UsageWrite is one batch to write. The store fills the batch's EnvironmentID and Seq
// and the events' batch columns (BatchSeq, TransactionID, Mode, EnvironmentID, times).
type UsageWrite struct {
	Batch   models.UsageBatch
	Events  []models.UsageEvent
	Rollups []models.UsageRollup // one per key, sorted by key (lock order)
}

// ErrUsageBatchTaken is a batch write refused because the environment has a batch with
// its transaction id: nothing of it was written. The unique (environment, transaction
// id) decides at any concurrency: a second writer waits for the first one's transaction,
// then finds its row.
var ErrUsageBatchTaken = errors.New("usage batch exists")

// WriteUsage writes a batch, its events and its rollups, all or nothing, and returns the
// stored batch; ErrUsageBatchTaken when its transaction id is taken. It is the write of
// a batch whose request keeps no answer, so it needs no transaction of the caller's: on
// PostgreSQL one statement (usage_pg.go), on SQLite a transaction of its own. It is the
// ingest fast path, the store's named exception to InTx (issue 42): a request whose
// Idempotency-Key keeps an answer writes its batch in its InTx instead (Tx.WriteUsage).
func (s *Store) WriteUsage(ctx context.Context, env Env, w UsageWrite) (_ models.UsageBatch, err error) {
	ctx, end := s.span(ctx, "db usage ingest")
	defer end(&err)
	if s.dialect == "postgres" {
		b, err := writeUsage(ctx, s.db.WithContext(ctx), s.dialect, env, &w)
		return b, dbError(err) // its raw statement bypasses GORM's translation
	}
	var b models.UsageBatch
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		b, err = writeUsage(ctx, tx, s.dialect, env, &w)
		return err
	})
	return b, dbError(err)
}

// WriteUsage is Store.WriteUsage in the transaction: the batch commits with whatever
// else the transaction writes (an Idempotency-Key's answer).
func (tx *Tx) WriteUsage(w UsageWrite) (models.UsageBatch, error) {
	return writeUsage(tx.db.Statement.Context, tx.db, tx.dialect, tx.env, &w)
}

// writeUsage writes w in db: PostgreSQL's one statement, or SQLite's three.
func writeUsage(ctx context.Context, db *gorm.DB, dialect string, env Env, w *UsageWrite) (models.UsageBatch, error) {
	b := w.Batch
	b.EnvironmentID = env.ID
	var err error
	if dialect == "postgres" {
		b.Seq, err = ingestPostgres(ctx, db, &b, w)
		return b, err
	}
	if b.Seq, err = insertBatch(db, &b); err != nil {
		return b, err
	}
	if err := insertEvents(db, env, &b, w.Events); err != nil {
		return b, err
	}
	return b, upsertRollups(db, env, &b, w.Rollups)
}

// UsageBatch reads the environment's batch with transaction id txID.
func (s *Store) UsageBatch(ctx context.Context, env Env, txID string) (models.UsageBatch, error) {
	return takeRow[models.UsageBatch](s.in(ctx, env), "usage batch "+txID, "transaction_id = ?", txID)
}

// insertBatch claims the transaction id; ErrUsageBatchTaken when it is taken.
func insertBatch(tx *gorm.DB, b *models.UsageBatch) (int64, error) {
	var seqs []int64
	err := tx.Raw(`INSERT INTO usage_batches
		(environment_id, transaction_id, mode, body_hash, response, metrics_count, received_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (environment_id, transaction_id) DO NOTHING RETURNING seq`,
		b.EnvironmentID, b.TransactionID, b.Mode, b.BodyHash, b.Response, b.MetricsCount, b.ReceivedAt, b.ReceivedAt).
		Scan(&seqs).Error
	if err != nil {
		return 0, fmt.Errorf("insert batch: %w", err)
	}
	if len(seqs) == 0 {
		return 0, ErrUsageBatchTaken
	}
	return seqs[0], nil
}

// insertEvents writes the batch's rows with one multi-row VALUES (SQLite; PostgreSQL
// writes everything in one statement, usage_pg.go).
func insertEvents(tx *gorm.DB, env Env, b *models.UsageBatch, evs []models.UsageEvent) error {
	const cols = `(id, environment_id, batch_seq, transaction_id, mode, account_id, product, metric_name,
		metric_value, metric_resolution, metadata, timestamp, received_at, created_at)`
	args := make([]any, 0, len(evs)*14)
	for i := range evs {
		e := &evs[i]
		args = append(args, e.ID, env.ID, b.Seq, b.TransactionID, b.Mode, e.AccountID, e.Product, e.MetricName,
			e.MetricValue, e.MetricResolution, e.Metadata, e.Timestamp, b.ReceivedAt, b.ReceivedAt)
	}
	_, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context,
		`INSERT INTO usage_events `+cols+` VALUES `+placeholders(len(evs), 14), args...)
	if err != nil {
		return fmt.Errorf("insert %d usage events: %w", len(evs), err)
	}
	return nil
}

// upsertRollups applies the batch to its rollup rows (SQLite): increment adds; set
// replaces the value only when this batch's seq is newer than the row's last set. Rows
// go in the caller's key order, the lock order.
func upsertRollups(tx *gorm.DB, env Env, b *models.UsageBatch, rs []models.UsageRollup) error {
	onConflict := ` ON CONFLICT (environment_id, account_id, product, metric_name, resolution, period_start) DO UPDATE SET
		value = usage_rollups.value + excluded.value, updated_at = excluded.updated_at`
	setSeq := int64(0)
	if b.Mode == "set" {
		setSeq = b.Seq
		onConflict = ` ON CONFLICT (environment_id, account_id, product, metric_name, resolution, period_start) DO UPDATE SET
		value = excluded.value, set_seq = excluded.set_seq, updated_at = excluded.updated_at
		WHERE excluded.set_seq > usage_rollups.set_seq`
	}
	const cols = `(environment_id, account_id, product, metric_name, resolution, period_start, value, set_seq, updated_at)`
	args := make([]any, 0, len(rs)*9)
	for i := range rs {
		r := &rs[i]
		args = append(args, env.ID, r.AccountID, r.Product, r.MetricName, r.Resolution, r.PeriodStart, r.Value, setSeq, b.ReceivedAt)
	}
	_, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context,
		`INSERT INTO usage_rollups `+cols+` VALUES `+placeholders(len(rs), 9)+onConflict, args...)
	if err != nil {
		return fmt.Errorf("upsert %d usage rollups: %w", len(rs), err)
	}
	return nil
}

// placeholders builds "(?,?),(?,?)" for rows × cols (SQLite).
func placeholders(rows, cols int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	var sb strings.Builder
	sb.Grow(rows * (len(one) + 1))
	for i := range rows {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(one)
	}
	return sb.String()
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// ingestUsageSQL writes a batch, its events and its rollups on PostgreSQL in ONE
// statement: one round trip and an implicit transaction (all or nothing), instead of
// BEGIN, three statements and COMMIT. On a loaded two-core machine every round trip is a
// wake-up of the backend and of the handler, which is what small batches wait on.
//
//   - b claims the transaction id: ON CONFLICT DO NOTHING returns no row when it is
//     taken (after waiting for a concurrent claimer to commit or roll back), and then e and
//     r, which read b, write nothing: the caller sees no row and answers a replay.
//   - Rows travel as one array per column (unnest): a fixed number of parameters, so the
//     statement is prepared once per connection (pgx's statement cache) whatever the
//     batch size, and no per-row work happens in Go.
//   - r takes rollups in the caller's key order (ORDER BY ordinality), so concurrent
//     batches lock shared rows in the same order. %s is set_seq: 0 for increment, the
//     batch's seq for set; %s is the conflict action.
const ingestUsageSQL = `WITH b AS (
	INSERT INTO usage_batches
		(environment_id, transaction_id, mode, body_hash, response, metrics_count, received_at, created_at)
	VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::integer, $7::timestamptz, $7::timestamptz)
	ON CONFLICT (environment_id, transaction_id) DO NOTHING
	RETURNING seq
), e AS (
	INSERT INTO usage_events (id, environment_id, batch_seq, transaction_id, mode, account_id, product,
		metric_name, metric_value, metric_resolution, metadata, timestamp, received_at, created_at)
	SELECT u.id, $1::text, b.seq, $2::text, $3::text, u.a, u.p, u.m, u.v::numeric, u.r, u.md::jsonb, u.ts,
		$7::timestamptz, $7::timestamptz
	FROM b, unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
		$15::timestamptz[]) AS u(id, a, p, m, v, r, md, ts)
), r AS (
	INSERT INTO usage_rollups
		(environment_id, account_id, product, metric_name, resolution, period_start, value, set_seq, updated_at)
	SELECT $1::text, u.a, u.p, u.m, u.r, u.ps, u.v::numeric, %s, $7::timestamptz
	FROM b, unnest($16::text[], $17::text[], $18::text[], $19::text[], $20::timestamptz[], $21::text[])
		WITH ORDINALITY AS u(a, p, m, r, ps, v, o)
	ORDER BY u.o
	ON CONFLICT (environment_id, account_id, product, metric_name, resolution, period_start) DO UPDATE SET %s
)
SELECT seq FROM b`

// The two texts of ingestUsageSQL: increment adds; set replaces the value only when this
// batch's seq is newer than the row's last set.
var (
	ingestIncrementSQL = fmt.Sprintf(ingestUsageSQL, "0::bigint",
		`value = usage_rollups.value + excluded.value, updated_at = excluded.updated_at`)
	ingestSetSQL = fmt.Sprintf(ingestUsageSQL, "b.seq",
		`value = excluded.value, set_seq = excluded.set_seq, updated_at = excluded.updated_at
		WHERE excluded.set_seq > usage_rollups.set_seq`)
)

// ingestPostgres runs ingestUsageSQL; ErrUsageBatchTaken when the transaction id is taken.
func ingestPostgres(ctx context.Context, db *gorm.DB, b *models.UsageBatch, w *UsageWrite) (int64, error) {
	n := len(w.Events)
	ids, accts, prods, names := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	vals, ress, metas, tss := make([]string, n), make([]string, n), make([]string, n), make([]time.Time, n)
	for i := range w.Events {
		e := &w.Events[i]
		ids[i], accts[i], prods[i], names[i] = e.ID, e.AccountID, e.Product, e.MetricName
		vals[i], ress[i], metas[i], tss[i] = e.MetricValue, e.MetricResolution, e.Metadata, e.Timestamp
	}
	k := len(w.Rollups)
	rAccts, rProds, rNames, rRess := make([]string, k), make([]string, k), make([]string, k), make([]string, k)
	rPeriods, rVals := make([]time.Time, k), make([]string, k)
	for i := range w.Rollups {
		r := &w.Rollups[i]
		rAccts[i], rProds[i], rNames[i], rRess[i], rPeriods[i], rVals[i] = r.AccountID, r.Product, r.MetricName, r.Resolution, r.PeriodStart, r.Value
	}
	query := ingestIncrementSQL
	if b.Mode == "set" {
		query = ingestSetSQL
	}
	var seq int64
	err := db.Statement.ConnPool.QueryRowContext(ctx, query,
		b.EnvironmentID, b.TransactionID, b.Mode, b.BodyHash, b.Response, b.MetricsCount, b.ReceivedAt,
		ids, accts, prods, names, vals, ress, metas, tss,
		rAccts, rProds, rNames, rRess, rPeriods, rVals).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrUsageBatchTaken
	}
	if err != nil {
		return 0, fmt.Errorf("write batch, %d events and %d rollups: %w", n, k, err)
	}
	return seq, nil
}

package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
)

// benchEventsRows is the main environment's events (REVOPS_BENCH_EVENTS_ROWS); three
// other environments hold a tenth of that each.
func benchEventsRows() int {
	if n, err := strconv.Atoi(os.Getenv("REVOPS_BENCH_EVENTS_ROWS")); err == nil && n >= 1000 {
		return n
	}
	return 1_000_000
}

// loadFilterEvents fills a migrated, empty database for BenchmarkEventFilters, or finds
// what an earlier run loaded, and returns the main environment. Events are created
// evenly over the last 30 days: type deal-created, deal-signed, deal-active and
// account-created 10 % each, deal-updated and account-updated 30 % (account-deleted:
// none); status retrying for exactly 10 rows spread over the window, pending for the
// newest 100, skipped for 80 % of the account events (no endpoint subscribes to them;
// never a deal's), failed 3 % of the rest, delivered otherwise; 100,000 object ids,
// skewed (the square of a uniform draw); a 300-byte payload. Every event not skipped
// has one delivery, with its status, to its environment's endpoint
// (md5('w' || environment id)); a quiet endpoint (md5('q' || environment id)) has a
// delivery of one event in 4,096 (ids ending in 000). Rows are generated in PostgreSQL with the secondary
// indexes dropped, which are then rebuilt from their own definitions; then VACUUM
// (ANALYZE).
func loadFilterEvents(b *testing.B, st *store.Store, conn *pgx.Conn) store.Env {
	ctx := context.Background()
	var mainID string
	err := conn.QueryRow(ctx, `SELECT environment_id FROM events GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`).Scan(&mainID)
	if err == nil {
		return benchEnvOf(b, st, conn, mainID)
	}
	if err != pgx.ErrNoRows {
		b.Fatal(err)
	}
	rows := benchEventsRows()
	var envs []string
	for _, env := range twoOrgs(b, ctx, st, "Bench %d", "bench%d@example.com") {
		envs = append(envs, env.ID)
	}
	exec := func(what, sql string, args ...any) {
		t0 := time.Now()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			b.Fatal(fmt.Errorf("%s: %w", what, err))
		}
		fmt.Printf("load: %-50s %6.1f s  load %s\n", what, time.Since(t0).Seconds(), loadAverage())
	}
	for _, set := range []string{`SET synchronous_commit = off`, `SET maintenance_work_mem = '256MB'`, `SET TimeZone = 'UTC'`, `SELECT setseed(0.2)`} {
		exec(set, set)
	}
	names, defs, err := testdb.SecondaryIndexes(ctx, conn, "events", "webhook_deliveries")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range names {
		exec("drop index "+n, `DROP INDEX `+n)
	}
	for i, env := range envs {
		n := rows
		if i > 0 {
			n = rows / 10
		}
		exec(fmt.Sprintf("events of environment %d (%d)", i, n), `INSERT INTO events (id, organization_id, environment_id, environment,
			type, object_type, object_id, time, payload, status, seq, dispatched_at, workflow_id, run_id, created_at, updated_at)
		SELECT eid, en.organization_id, en.id, en.name, t, split_part(t, '-', 1), obj, extract(epoch FROM c)::bigint::text,
			'{"event":{"id":"' || eid || '","time":"' || extract(epoch FROM c)::bigint || '","type":"' || t || '"},"' || split_part(t, '-', 1) ||
			'":{"id":"' || obj || '","name":"Bench ' || g || '","status":"active","amount":"1200.00","currency":"USD","properties":{"owner":"sales@example.com","region":"eu-west-1"}}}',
			CASE WHEN g % ($2::int / 10) = $2::int / 20 THEN 'retrying'
				WHEN g > $2::int - 100 THEN 'pending'
				WHEN t LIKE 'account%' AND x < 0.8 THEN 'skipped'
				WHEN x > 0.97 THEN 'failed'
				ELSE 'delivered' END,
			1, c, 'event-' || eid, md5(eid), c, c
		FROM (SELECT g, md5($1::text || g)::uuid::text AS eid, now() - interval '30 days' + g * (interval '30 days' / $2::int) AS c,
				md5('o' || floor(pow(random(), 2) * 100000)::int)::uuid::text AS obj, random() AS x,
				('{deal-created,deal-updated,deal-updated,deal-updated,deal-signed,deal-active,account-created,account-updated,account-updated,account-updated}'::text[])[1 + floor(random() * 10)::int] AS t
			FROM generate_series(1, $2::int) g) e
		JOIN environments en ON en.id = $1::text`, env, n)
	}
	exec("webhook_deliveries", `INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status,
			retry_initial_interval_ms, retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, last_error, created_at, updated_at)
		SELECT md5('d' || id)::uuid::text, id, environment_id, md5('w' || environment_id)::uuid::text, status, 3600000, 1, 3600000, 6,
			CASE WHEN status = 'failed' THEN 'status 500' ELSE '' END, created_at, updated_at
		FROM events WHERE status <> 'skipped'`)
	exec("webhook_deliveries of a quiet endpoint", `INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status,
			retry_initial_interval_ms, retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, last_error, created_at, updated_at)
		SELECT md5('q' || id)::uuid::text, id, environment_id, md5('q' || environment_id)::uuid::text, 'delivered', 3600000, 1, 3600000, 6,
			'', created_at, updated_at
		FROM events WHERE status <> 'skipped' AND id LIKE '%000'`)
	for _, d := range defs {
		exec(d[:min(len(d), 50)], d)
	}
	for _, table := range []string{"events", "webhook_deliveries"} {
		exec("vacuum analyze "+table, `VACUUM (ANALYZE) `+table)
	}
	exec("checkpoint", `CHECKPOINT`)
	return benchEnvOf(b, st, conn, envs[0])
}

func benchEnvOf(b *testing.B, st *store.Store, conn *pgx.Conn, envID string) store.Env {
	var orgID, name string
	if err := conn.QueryRow(context.Background(), `SELECT organization_id, name FROM environments WHERE id = $1`, envID).Scan(&orgID, &name); err != nil {
		b.Fatal(err)
	}
	env, err := st.Environment(context.Background(), orgID, name)
	if err != nil {
		b.Fatal(err)
	}
	return env
}

// loadAverage is the machine's 1-minute load average, for the record.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil || len(raw) < 4 {
		return "?"
	}
	var one string
	_, _ = fmt.Sscan(string(raw), &one)
	return one
}

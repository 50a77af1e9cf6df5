package usagebench

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/store"
)

// scaleAccounts is the number of account names per environment; activity is skewed
// (the cube of a uniform draw), so a few accounts send most of the usage.
const scaleAccounts = 5000

// load fills a migrated database with REVOPS_SCALE_ROWS usage rows and
// REVOPS_SCALE_EVENTS events as the ingest and the outbox would have written them, over
// the last 35 days, in four environments (70 %, 15 %, 10 %, 5 %); it returns the
// organization whose sandbox is the large environment. Rows are generated inside
// PostgreSQL (generate_series) with the secondary indexes dropped, which are then built
// again from their own definitions, and the tables vacuumed and analyzed.
func load(b testing.TB, st *store.Store, pool *pgxpool.Pool) string {
	ctx := context.Background()
	rows := AtoiEnv("REVOPS_SCALE_ROWS", 10_000_000)
	events := AtoiEnv("REVOPS_SCALE_EVENTS", 1_000_000)
	var envs []string
	var orgID string
	for i := range 2 {
		org, err := orgs.CreateWithHash(ctx, st, fmt.Sprintf("Scale %d", i), fmt.Sprintf("scale%d@example.com", i), "x")
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			orgID = org.ID
		}
		for _, name := range []string{"sandbox", "live"} {
			var id string
			if err := pool.QueryRow(ctx, `SELECT id FROM environments WHERE organization_id = $1 AND name = $2`, org.ID, name).Scan(&id); err != nil {
				b.Fatal(err)
			}
			envs = append(envs, id)
		}
	}
	l := NewLoader(b, pool, 0.15)
	defer l.Release()
	exec := l.Exec
	tables := []string{"usage_batches", "usage_events", "usage_rollups", "events", "webhook_deliveries", "delivery_attempts"}
	defs := l.DropSecondaryIndexes(tables...)
	// The large environment is the first; batches of 100 rows, received evenly over 35
	// days, each batch in one environment.
	const envOfSeq = `($1::text[])[CASE WHEN s %% 20 < 14 THEN 1 WHEN s %% 20 < 17 THEN 2 WHEN s %% 20 < 19 THEN 3 ELSE 4 END]`
	nb := (rows + 99) / 100
	recv := `now() - interval '35 days' + s * (interval '35 days' / $2::int)`
	exec("usage_batches", fmt.Sprintf(`INSERT INTO usage_batches (seq, environment_id, transaction_id, mode, body_hash, response,
		metrics_count, received_at, created_at)
		SELECT s, `+envOfSeq+`, 'load-' || s, 'increment', md5(s::text), '{}', 100, %[1]s, %[1]s
		FROM generate_series(1, $2::int) s`, recv), envs, nb)
	exec("usage_batches seq", `SELECT setval(pg_get_serial_sequence('usage_batches', 'seq'), $1::bigint)`, nb)
	// id: a UUID v7 of the batch's received_at (milliseconds) with g as its random part.
	exec("usage_events", fmt.Sprintf(`INSERT INTO usage_events (id, environment_id, batch_seq, transaction_id, mode, account_id,
		product, metric_name, metric_value, metric_resolution, metadata, timestamp, received_at, created_at)
		SELECT `+UUIDText("h")+`,
			env, s, 'load-' || s, 'increment', 'acct_' || floor(pow(random(), 3) * %[2]d)::int, p, p || '_' || m,
			(floor(random() * 10000) / 10)::numeric, res, '{"region": "eu-west-1"}'::jsonb,
			CASE WHEN random() < 0.95 THEN rc - random() * interval '1 hour' ELSE rc - random() * interval '3 days' END, rc, rc
		FROM (SELECT g, s, rc, `+envOfSeq+` AS env,
				`+UUIDv7Hex("rc", "g")+` AS h,
				('{core,storage,ai,messaging,analytics}'::text[])[1 + floor(random() * 5)::int] AS p,
				('{calls,bytes,units,seconds}'::text[])[1 + floor(random() * 4)::int] AS m,
				(SELECT CASE WHEN x < 0.75 THEN 'hour' WHEN x < 0.90 THEN 'day' WHEN x < 0.95 THEN 'minute' WHEN x < 0.98 THEN 'week' ELSE 'month' END
					FROM (SELECT random() + g * 0 AS x) z) AS res
			FROM (SELECT g, g / 100 + 1 AS s, %[1]s AS rc FROM (SELECT g, g / 100 + 1 AS s FROM generate_series(0, $3::int - 1) g) a) b) c`,
		recv, scaleAccounts), envs, nb, rows)
	exec("usage_rollups", `INSERT INTO usage_rollups (environment_id, account_id, product, metric_name, resolution, period_start,
		value, set_seq, updated_at)
		SELECT environment_id, account_id, product, metric_name, metric_resolution, date_trunc(metric_resolution, timestamp),
			sum(metric_value), 0, max(received_at)
		FROM usage_events GROUP BY 1, 2, 3, 4, 5, 6`)
	// Events: one per change, over the same 35 days and environments; a delivery each to
	// the environment's endpoint; attempts: 1, or 3 for the failed and retrying ones.
	ev := fmt.Sprintf(`now() - interval '35 days' + g * (interval '35 days' / %d)`, events)
	exec("events", fmt.Sprintf(`INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id,
		time, payload, status, seq, dispatched_at, workflow_id, run_id, created_at, updated_at)
		SELECT eid, en.organization_id, en.id, en.name, t, CASE WHEN t LIKE 'deal%%' THEN 'deal' ELSE 'account' END, obj,
			to_char(c AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
			'{"event":{"id":"' || eid || '","type":"' || t || '"},"deal":{"id":"' || obj || '","name":"Deal ' || g || '","status":"active","amount":"1200.00","currency":"USD","account_id":"acct_' || (g %% 997) || '","properties":{"owner":"sales@example.com","region":"eu-west-1"}}}',
			st, g, c, 'event-' || eid, md5(eid), c, c
		FROM (SELECT g, md5('e' || g)::uuid::text AS eid, %[1]s AS c,
				md5('o' || (floor(pow(random(), 2) * 100000)::int))::uuid::text AS obj,
				('{deal-created,deal-updated,deal-updated,deal-updated,deal-signed,deal-active,account-created,account-updated}'::text[])[1 + floor(random() * 8)::int] AS t,
				(SELECT CASE WHEN x < 0.85 THEN 'delivered' WHEN x < 0.90 THEN 'failed' WHEN x < 0.95 THEN 'skipped' WHEN x < 0.97 THEN 'retrying' ELSE 'pending' END
					FROM (SELECT random() + g * 0 AS x) z) AS st,
				`+envOfSeq+` AS env
			FROM (SELECT g, g AS s FROM generate_series(1, $2::int) g) a) e
		JOIN environments en ON en.id = e.env`, ev), envs, events)
	exec("webhook_deliveries", `INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status,
		retry_initial_interval_ms, retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, last_error, created_at, updated_at)
		SELECT md5('d' || id)::uuid::text, id, environment_id, md5('w' || environment_id)::uuid::text, status, 3600000, 1, 3600000, 6,
			CASE WHEN status = 'failed' THEN 'status 500' ELSE '' END, created_at, updated_at
		FROM events`)
	exec("delivery_attempts", `INSERT INTO delivery_attempts (id, event_id, environment_id, run_id, number, trigger, url, method,
		started_at, duration_ms, status_code, response_excerpt, error, outcome, created_at, delivery_id, endpoint_id)
		SELECT md5('a' || e.id || n)::uuid::text, e.id, e.environment_id, e.run_id, n, 'scheduled', 'https://hooks.example.com/revops', 'POST',
			e.created_at + (n - 1) * interval '1 hour', 120, CASE WHEN e.status = 'delivered' AND n = 1 THEN 200 ELSE 500 END,
			CASE WHEN e.status = 'delivered' THEN 'ok' ELSE 'Internal Server Error' END,
			CASE WHEN e.status = 'delivered' THEN '' ELSE 'status 500' END,
			CASE WHEN e.status = 'delivered' THEN 'delivered' ELSE 'failed' END, e.created_at, md5('d' || e.id)::uuid::text,
			md5('w' || e.environment_id)::uuid::text
		FROM events e, generate_series(1, CASE WHEN e.status IN ('failed', 'retrying') THEN 3 ELSE 1 END) n
		WHERE e.status <> 'skipped' AND e.status <> 'pending'`)
	l.Rebuild(defs, tables...)
	return orgID
}

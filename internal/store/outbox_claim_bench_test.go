package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
)

// previousClaimSQL is the claim's statement before issue 41 (no round to the first
// environments, no held events): the baseline of BenchmarkClaimStatement.
const previousClaimSQL = `WITH RECURSIVE envs(id) AS (
	(SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id > $1 ORDER BY environment_id LIMIT 1)
	UNION ALL
	SELECT (SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id > envs.id ORDER BY environment_id LIMIT 1)
	FROM envs WHERE envs.id IS NOT NULL
), picked AS (SELECT id FROM envs WHERE id IS NOT NULL LIMIT $2)
SELECT ev.* FROM picked CROSS JOIN LATERAL (
	SELECT * FROM events e WHERE e.environment_id = picked.id AND e.dispatched_at IS NULL
	AND pg_try_advisory_xact_lock(hashtextextended('revops-start:' || e.id, 0))
	ORDER BY e.created_at, e.seq LIMIT GREATEST(1, $3 / (SELECT count(*) FROM picked))) ev
ORDER BY ev.environment_id, ev.created_at, ev.seq`

// BenchmarkClaimStatement times a claim's statement (16 environments, 64 events) on
// PostgreSQL over 200 environments with 20 events each owed a start, among 100,000
// dispatched ones, as the claimer runs it (a prepared statement: after five runs
// PostgreSQL may plan it once for all parameters): the previous statement (the baseline,
// same run, alternating), this one from the first environment and from part-way (round
// to the first ones), and this one leaving 64 held events (the most a claim names), the
// oldest of four environments. Each statement runs alone (its advisory locks end with
// it); it prints the median of each and its ratio to the baseline's.
//
//	REVOPS_TEST_DATABASE_URL=… go test ./internal/store -run '^$' -bench ClaimStatement -benchtime 1x
//
// REVOPS_BENCH_CLAIM_EXPLAIN=1 prints the plan of the held case.
func BenchmarkClaimStatement(b *testing.B) {
	ctx := context.Background()
	url := testdb.URL(b)
	st := testdb.Open(b, url)
	for i := range 100 {
		if _, err := orgs.CreateWithHash(ctx, st, fmt.Sprintf("Org %d", i), fmt.Sprintf("o%d@example.com", i), "x"); err != nil {
			b.Fatal(err)
		}
	}
	load := func(perEnv int, dispatched string) {
		if err := st.ExecForTest(ctx, `INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id,
			time, payload, status, seq, dispatched_at, created_at, updated_at)
			SELECT gen_random_uuid()::text, e.organization_id, e.id, e.name, 'account-created', 'account', 'acct', '0', '{}', 'pending', 0, `+dispatched+`,
				now() - (n || ' seconds')::interval, now()
			FROM environments e, generate_series(1, ?) AS n`, perEnv); err != nil {
			b.Fatal(err)
		}
	}
	load(500, "now()")
	load(20, "NULL")
	if err := st.ExecForTest(ctx, "ANALYZE events"); err != nil {
		b.Fatal(err)
	}
	var envs, held []string
	if err := st.ScanForTest(ctx, &envs, "SELECT id FROM environments ORDER BY id"); err != nil {
		b.Fatal(err)
	}
	if err := st.ScanForTest(ctx, &held, `SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY environment_id, created_at LIMIT 64`); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	type variant struct {
		name string
		sql  string
		args []any
	}
	none := []string{}
	variants := []variant{
		{"previous (baseline)", previousClaimSQL, []any{"", 16, 64}},
		{"this, from the first", store.ClaimSQLForTest, []any{"", 16, 64, none}},
		{"this, 8 before the last (round to the first)", store.ClaimSQLForTest, []any{envs[len(envs)-9], 16, 64, none}},
		{"this, 64 held", store.ClaimSQLForTest, []any{"", 16, 64, held}},
	}
	once := func(v variant) time.Duration {
		t0 := time.Now()
		rows, err := conn.Query(ctx, v.sql, v.args...)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		if n != 64 {
			b.Fatalf("%s: a claim took %d events, want 64", v.name, n)
		}
		return time.Since(t0)
	}
	for _, v := range variants { // prepared, and past the five custom plans
		for range 8 {
			once(v)
		}
	}
	b.ResetTimer()
	times := make([][]time.Duration, len(variants))
	for range 100 {
		for i, v := range variants {
			times[i] = append(times[i], once(v))
		}
	}
	median := func(ts []time.Duration) time.Duration {
		slices.Sort(ts)
		return ts[len(ts)/2]
	}
	base := median(times[0])
	fmt.Printf("\nclaim statement, 200 environments × 20 owed among 100,000 dispatched (median of 100, alternating)\n")
	for i, v := range variants {
		d := median(times[i])
		fmt.Printf("  %-46s %6.2f ms  ×%.2f\n", v.name, d.Seconds()*1000, d.Seconds()/base.Seconds())
	}
	if os.Getenv("REVOPS_BENCH_CLAIM_EXPLAIN") != "" {
		rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+store.ClaimSQLForTest, variants[3].args...)
		if err != nil {
			b.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan = append(plan, line)
		}
		fmt.Println(strings.Join(plan, "\n"))
	}
}

package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// BenchmarkEventFilters measures the event list's filters (GET /v1/events, CONTRACT §9
// and §17) at 1M events in one environment on PostgreSQL, without and then with the
// indexes of migration 70, in the same run, and what those indexes cost the write path
// (docs/benchmarks.md, "Event filters at 1M events (issue 20)"). Opt in; the database
// is kept for later runs (the first one loads it, ≈ 1–2 min):
//
//	REVOPS_BENCH_EVENTS=1 REVOPS_BENCH_EVENTS_DB=revops_events_bench \
//	REVOPS_TEST_DATABASE_URL="postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable" \
//	  go test ./internal/store -run '^$' -bench EventFilters -benchtime 1x -timeout 1h
//	psql "…/postgres" -c 'DROP DATABASE revops_events_bench WITH (FORCE)'   # afterwards
//
// REVOPS_BENCH_EVENTS_RUNS: reads per filter (default 300, each filter stopped after
// 20 s); REVOPS_BENCH_EVENTS_WRITES: writes per round (default 400);
// REVOPS_BENCH_EVENTS_WRITE_ROUNDS: rounds of writes without then with (default 3);
// REVOPS_BENCH_EVENTS_WRITES_ONLY=1: no reads.
func BenchmarkEventFilters(b *testing.B) {
	if os.Getenv("REVOPS_BENCH_EVENTS") == "" {
		b.Skip("REVOPS_BENCH_EVENTS is not set: this benchmark loads 1.3M events into a database of its own")
	}
	ctx := context.Background()
	dbURL := benchEventsDatabase(b)
	st := testdb.Open(b, dbURL) // migrated: migration 70 included
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	env := loadFilterEvents(b, st, conn)
	cases := filterCases(b, conn, env)
	indexes := indexDefinitions(b, conn)

	b.ResetTimer()
	reads := os.Getenv("REVOPS_BENCH_EVENTS_WRITES_ONLY") == ""
	fmt.Printf("\n== without migration 70's indexes  load %s\n", loadAverage())
	dropIndexes(b, conn)
	if reads {
		runFilters(b, st, env, cases)
	}
	build := func() {
		for _, def := range indexes {
			t0 := time.Now()
			if _, err := conn.Exec(ctx, strings.Replace(def, "CREATE INDEX", "CREATE INDEX CONCURRENTLY", 1)); err != nil {
				b.Fatal(err)
			}
			fmt.Printf("  built %-62s %6.1f s  load %s\n", def[:min(len(def), 62)], time.Since(t0).Seconds(), loadAverage())
		}
		analyze(b, conn)
	}
	fmt.Printf("\n== building migration 70's indexes (CONCURRENTLY)\n")
	build()
	fmt.Printf("\n== with migration 70's indexes  load %s\n", loadAverage())
	if reads {
		runFilters(b, st, env, cases)
	}
	// Writes alternate, without then with, so that both see the same load.
	fmt.Printf("\n== writes, one client, alternating\n")
	writes := writeRounds(b, st, conn, env)
	for i := range envInt("REVOPS_BENCH_EVENTS_WRITE_ROUNDS", 3) {
		dropIndexes(b, conn)
		writes(fmt.Sprintf("without, round %d", i+1))
		build()
		writes(fmt.Sprintf("with, round %d", i+1))
	}
	var size string
	if err := conn.QueryRow(ctx, `SELECT string_agg(c.relname || ' ' || pg_size_pretty(pg_relation_size(c.oid)), ', ' ORDER BY c.relname)
		FROM pg_class c WHERE c.relname = ANY($1)`, store.EventFilterIndexes).Scan(&size); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("\nindex sizes: %s\n", size)
}

// benchEventsDatabase creates the benchmark's database when it does not exist and
// returns its URL.
func benchEventsDatabase(b *testing.B) string {
	admin := os.Getenv(testdb.EnvVar)
	if admin == "" {
		b.Skipf("%s is not set", testdb.EnvVar)
	}
	name := os.Getenv("REVOPS_BENCH_EVENTS_DB")
	if name == "" {
		name = "revops_events_bench"
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	u, err := url.Parse(admin)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// indexDefinitions reads migration 70's indexes as PostgreSQL holds them.
func indexDefinitions(b *testing.B, conn *pgx.Conn) []string {
	var defs []string
	for _, name := range store.EventFilterIndexes {
		var def string
		if err := conn.QueryRow(context.Background(), `SELECT indexdef FROM pg_indexes WHERE indexname = $1`, name).Scan(&def); err != nil {
			b.Fatalf("index %s: %v", name, err)
		}
		defs = append(defs, def)
	}
	return defs
}

func dropIndexes(b *testing.B, conn *pgx.Conn) {
	for _, name := range store.EventFilterIndexes {
		if _, err := conn.Exec(context.Background(), `DROP INDEX IF EXISTS `+name); err != nil {
			b.Fatal(err)
		}
	}
	analyze(b, conn)
}

func analyze(b *testing.B, conn *pgx.Conn) {
	if _, err := conn.Exec(context.Background(), `ANALYZE events`); err != nil {
		b.Fatal(err)
	}
}

// filterCase is one kind of list request; next draws its parameters.
type filterCase struct {
	name string
	next func(r *rand.Rand) (store.EventFilter, store.Page)
}

func filterCases(b *testing.B, conn *pgx.Conn, env store.Env) []filterCase {
	ctx := context.Background()
	sample := func(sql string) []string {
		rows, err := conn.Query(ctx, sql, env.ID)
		if err != nil {
			b.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(out) == 0 {
			b.Fatalf("sample %q: %v %v", sql, out, err)
		}
		return out
	}
	// Objects drawn from the rows (weighted by activity); failed events anywhere, as cursors.
	objects := sample(`SELECT object_id FROM events TABLESAMPLE SYSTEM (1) WHERE environment_id = $1 LIMIT 300`)
	failed := sample(`SELECT id FROM events TABLESAMPLE SYSTEM (2) WHERE environment_id = $1 AND status = 'failed' LIMIT 300`)
	endpoint := sample(`SELECT md5('w' || $1::text)::uuid::text`)[0]
	quiet := sample(`SELECT md5('q' || $1::text)::uuid::text`)[0]
	now := time.Now().UTC()
	day := func(r *rand.Rand) (*time.Time, *time.Time) {
		from := now.Add(-30*24*time.Hour + time.Duration(r.Int64N(int64(29*24*time.Hour))))
		to := from.Add(24 * time.Hour)
		return &from, &to
	}
	page := store.Page{Limit: 20}
	fixed := func(f store.EventFilter) func(*rand.Rand) (store.EventFilter, store.Page) {
		return func(*rand.Rand) (store.EventFilter, store.Page) { return f, page }
	}
	ranged := func(f store.EventFilter) func(*rand.Rand) (store.EventFilter, store.Page) {
		return func(r *rand.Rand) (store.EventFilter, store.Page) {
			f.CreatedAfter, f.CreatedBefore = day(r)
			return f, page
		}
	}
	return []filterCase{
		{"newest, no filter", fixed(store.EventFilter{})},
		{"type (deal-updated, 30 %)", fixed(store.EventFilter{Type: "deal-updated"})},
		{"type no row has (account-deleted)", fixed(store.EventFilter{Type: "account-deleted"})},
		{"status=failed (≈ 2 %)", fixed(store.EventFilter{Status: models.EventFailed})},
		{"status 10 rows have (retrying)", fixed(store.EventFilter{Status: models.EventRetrying})},
		{"status=pending (the newest 100)", fixed(store.EventFilter{Status: models.EventPending})},
		{"object_id (drawn from the rows)", func(r *rand.Rand) (store.EventFilter, store.Page) {
			return store.EventFilter{ObjectID: objects[r.IntN(len(objects))]}, page
		}},
		{"object_id no row has", fixed(store.EventFilter{ObjectID: "00000000-0000-4000-8000-000000000000"})},
		{"created range (1 day, anywhere)", ranged(store.EventFilter{})},
		{"type + status (deal-updated, failed)", fixed(store.EventFilter{Type: "deal-updated", Status: models.EventFailed})},
		{"type + status never together (deal-signed, skipped)", fixed(store.EventFilter{Type: "deal-signed", Status: models.EventSkipped})},
		{"type + created range (1 day)", ranged(store.EventFilter{Type: "deal-updated"})},
		{"type no row has + created range", ranged(store.EventFilter{Type: "account-deleted"})},
		{"status=failed + created range (1 day)", ranged(store.EventFilter{Status: models.EventFailed})},
		{"status 10 rows have + created range", ranged(store.EventFilter{Status: models.EventRetrying})},
		{"type + status + created range", ranged(store.EventFilter{Type: "account-updated", Status: models.EventSkipped})},
		{"object_id + status=failed", func(r *rand.Rand) (store.EventFilter, store.Page) {
			return store.EventFilter{ObjectID: objects[r.IntN(len(objects))], Status: models.EventFailed}, page
		}},
		{"status=failed + starting_after (anywhere)", func(r *rand.Rand) (store.EventFilter, store.Page) {
			return store.EventFilter{Status: models.EventFailed}, store.Page{Limit: 20, StartingAfter: failed[r.IntN(len(failed))]}
		}},
		{"endpoint_id + status=failed", fixed(store.EventFilter{EndpointID: endpoint, Status: models.EventFailed})},
		{"endpoint_id + status 10 rows have", fixed(store.EventFilter{EndpointID: endpoint, Status: models.EventRetrying})},
		{"endpoint_id with ≈ 240 deliveries", fixed(store.EventFilter{EndpointID: quiet})},
	}
}

// runFilters times each case through events.List (the events and their deliveries and
// attempts, as GET /v1/events reads them), one client, and prints p50/p99 and the key
// lines of one EXPLAIN (ANALYZE, BUFFERS) of the list query.
func runFilters(b *testing.B, st *store.Store, env store.Env, cases []filterCase) {
	ctx := context.Background()
	runs := envInt("REVOPS_BENCH_EVENTS_RUNS", 300)
	for i, c := range cases {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		f, page := c.next(r)
		plan, err := st.ExplainEvents(ctx, env, f, page, true)
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		var took []time.Duration
		rows := 0
		start := time.Now()
		for len(took) < runs && time.Since(start) < 20*time.Second {
			f, page := c.next(r)
			t0 := time.Now()
			list, _, err := events.List(ctx, st, env, events.Filter(f), page)
			took = append(took, time.Since(t0))
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			rows += len(list)
		}
		slices.Sort(took)
		fmt.Printf("%-52s n %4d  rows/page %5.1f  p50 %8.2f ms  p99 %8.2f ms  load %s\n", c.name, len(took),
			float64(rows)/float64(len(took)), ms(took[len(took)/2]), ms(took[(len(took)*99+99)/100-1]), loadAverage())
		for _, line := range plan {
			if keyPlanLine(line) {
				fmt.Printf("      %s\n", strings.TrimSpace(line))
			}
		}
	}
}

func keyPlanLine(line string) bool {
	for _, k := range []string{"Scan", "Sort", "Rows Removed", "Join", "Buffers: shared", "Execution Time"} {
		if strings.Contains(line, k) {
			return true
		}
	}
	return false
}

// writeRounds returns a function that measures, serially, the write path the indexes
// tax: a change writing an account and its event with one delivery (InTx), then one
// successful attempt per such event, which moves the event's status from pending to
// delivered (RecordDeliveryAttempt): with an index on status, that update can no longer
// be HOT (heap-only: no index touched), so every index of events gets an entry. Each
// round ends with the WAL of one such insert and update (walOfEventRow).
func writeRounds(b *testing.B, st *store.Store, conn *pgx.Conn, env store.Env) func(label string) {
	ctx := context.Background()
	eps, _, err := st.WebhookEndpoints(ctx, env, store.Page{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	db := seeded{st: st, env: env}
	if len(eps) == 0 {
		newEndpoint(b, db, "https://hooks.example.com/bench", nil, true)
	}
	n := envInt("REVOPS_BENCH_EVENTS_WRITES", 400)
	return func(label string) {
		// Both kinds of round start from a checkpoint: the index builds write a lot of
		// WAL, and the first change of each page after a checkpoint logs the whole page.
		if _, err := conn.Exec(ctx, `CHECKPOINT`); err != nil {
			b.Fatal(err)
		}
		evs := make([]models.Event, n)
		change := make([]time.Duration, n)
		t0 := time.Now()
		for i := range evs {
			t := time.Now()
			evs[i] = newAccountEvent(b, db)
			change[i] = time.Since(t)
		}
		changeWall := time.Since(t0)
		ds := make([]models.WebhookDelivery, n)
		for i, ev := range evs {
			got, err := st.EventDeliveries(ctx, env, ev.ID)
			if err != nil || len(got) != 1 {
				b.Fatalf("deliveries of %s: %v %v", ev.ID, got, err)
			}
			ds[i] = got[0]
		}
		status := make([]time.Duration, n)
		t0 = time.Now()
		for i, d := range ds {
			a := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "bench", Number: 1, Trigger: models.TriggerScheduled,
				StartedAt: time.Now().UTC(), Outcome: models.AttemptSucceeded, StatusCode: 200}
			t := time.Now()
			if err := webhooktest.RecordAttempt(ctx, st, env, &a, models.EventDelivered); err != nil {
				b.Fatal(err)
			}
			status[i] = time.Since(t)
		}
		statusWall := time.Since(t0)
		for _, m := range []struct {
			what string
			d    []time.Duration
			wall time.Duration
		}{{"change (account + event + delivery)", change, changeWall}, {"attempt (event pending → delivered)", status, statusWall}} {
			slices.Sort(m.d)
			fmt.Printf("write %-18s %-38s %6.0f /s  p50 %6.2f ms  p99 %6.2f ms  load %s\n", label, m.what,
				float64(len(m.d))/m.wall.Seconds(), ms(m.d[len(m.d)/2]), ms(m.d[(len(m.d)*99+99)/100-1]), loadAverage())
		}
		fmt.Printf("write %-18s WAL of one event row: %s\n", label, walOfEventRow(b, conn, evs[n-1].ID))
	}
}

// walOfEventRow is what the WAL holds for one more event row like id (INSERT) and for
// a change of its status (UPDATE, as an attempt's record does), from EXPLAIN (ANALYZE,
// WAL) in a transaction that is rolled back: the index entries each statement writes
// show there, whatever the load.
func walOfEventRow(b *testing.B, conn *pgx.Conn, id string) string {
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var out []string
	for _, q := range []struct{ what, sql string }{
		{"insert", `INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id, time, payload,
			status, seq, workflow_id, run_id, created_at, updated_at)
			SELECT md5(random()::text)::uuid::text, organization_id, environment_id, environment, type, object_type, object_id, time,
				payload, 'pending', seq, '', '', now(), now() FROM events WHERE id = $1`},
		{"status update", `UPDATE events SET status = 'failed', updated_at = now() WHERE id = $1`},
	} {
		rows, err := tx.Query(ctx, `EXPLAIN (ANALYZE, WAL, COSTS OFF, TIMING OFF, SUMMARY OFF) `+q.sql, id)
		if err != nil {
			b.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			b.Fatal(err)
		}
		wal := "?"
		for _, l := range lines {
			if strings.Contains(l, "WAL:") {
				wal = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "WAL:"))
				break
			}
		}
		out = append(out, q.what+" "+wal)
	}
	return strings.Join(out, "; ")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return n
	}
	return def
}

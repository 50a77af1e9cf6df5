package usagebench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BenchmarkScale measures usage ingest and the read routes on a database holding
// REVOPS_SCALE_ROWS usage rows (default 10M) and REVOPS_SCALE_EVENTS events (default 1M,
// each with a delivery and its attempts), against ingest into an empty database and
// COPY into both, in the same run. It runs only when REVOPS_SCALE_DB names the database
// to use (created and loaded when missing, kept for the next run; drop it afterwards):
//
//	REVOPS_SCALE_DB=revops_scale REVOPS_TEST_DATABASE_URL=… \
//	  go test ./internal/testkit/usagebench -run '^$' -bench Scale -benchtime 1x -timeout 2h
func BenchmarkScale(b *testing.B) {
	name := os.Getenv("REVOPS_SCALE_DB")
	if name == "" {
		b.Skip("REVOPS_SCALE_DB is not set: the scale benchmark loads gigabytes")
	}
	ctx := context.Background()
	big := openScale(b, name)
	empty := setup(b)
	reads := AtoiEnv("REVOPS_SCALE_READS", 300)
	requests := AtoiEnv("REVOPS_SCALE_REQUESTS", 160) // batches of 1000 per ingest phase
	nonce := time.Now().UnixNano()
	var seq atomic.Int64
	seq.Store(nonce % 1e12)
	for b.Loop() {
		big.clean(b)
		// Reads on the big database, one client, each kind in turn.
		s := big.sample(b)
		fmt.Printf("\n== reads on the loaded database, %d requests each, 1 client\n", reads)
		fmt.Printf("%-44s %8s %8s %8s %5s  load\n", "read", "p50 ms", "p99 ms", "max ms", "n")
		for _, k := range s.kinds() {
			lat := make([]time.Duration, 0, reads)
			rng := rand.New(rand.NewPCG(1, uint64(len(k.name))))
			// A kind is cut short after 30 s: a plan that reads the whole table would
			// otherwise hold the run for an hour; n then says how many were timed.
			t0 := time.Now()
			for range reads {
				if time.Since(t0) > 30*time.Second {
					break
				}
				d, err := big.get(k.path(rng))
				if err != nil {
					b.Fatalf("%s: %v", k.name, err)
				}
				lat = append(lat, d)
			}
			fmt.Printf("%-44s %8.2f %8.2f %8.2f %5d  %s\n", k.name, Millis(lat, 0.5), Millis(lat, 0.99), Millis(lat, 1), len(lat), LoadAvg())
		}
		// Ingest: empty and big alternate (A B B A), API then COPY, so both see the same load.
		fmt.Printf("\n== ingest, batch 1000 × 8 clients, %d requests per phase\n", requests)
		fmt.Printf("%-8s %-5s %12s %10s %10s  load\n", "table", "how", "metrics/s", "p50 ms", "p99 ms")
		type fig struct{ api, cp []float64 }
		figs := map[string]*fig{"empty": {}, "loaded": {}}
		for _, round := range [][]string{{"empty", "loaded"}, {"loaded", "empty"}} {
			for _, which := range round {
				e := empty
				if which == "loaded" {
					e = big
				}
				rate, lat, err := e.ingest(requests, 1000, 8, &seq)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Printf("%-8s %-5s %12.0f %10.1f %10.1f  %s\n", which, "api", rate, Millis(lat, 0.5), Millis(lat, 0.99), LoadAvg())
				// COPY into usage_events itself (the loaded table, same indexes, same
				// size), in the environment the API writes to.
				cp, err := e.copyBatches(ctx, "usage_events", e.EnvID, requests, 1000, 8, &seq)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Printf("%-8s %-5s %12.0f %10s %10s  %s\n", which, "copy", cp, "", "", LoadAvg())
				figs[which].api = append(figs[which].api, rate)
				figs[which].cp = append(figs[which].cp, cp)
			}
		}
		for _, which := range []string{"empty", "loaded"} {
			f := figs[which]
			fmt.Printf("%-8s ratio api/copy: %.2f, %.2f\n", which, f.api[0]/f.cp[0], f.api[1]/f.cp[1])
		}
		fmt.Printf("loaded/empty api: %.2f, %.2f (pairs of the same round)\n",
			figs["loaded"].api[0]/figs["empty"].api[0], figs["loaded"].api[1]/figs["empty"].api[1])
		b.ReportMetric((figs["loaded"].api[0]+figs["loaded"].api[1])/(figs["empty"].api[0]+figs["empty"].api[1]), "big/empty")

		big.clean(b)
	}
}

// openScale opens (creating and loading when needed) the scale database and serves the
// API on it with a key of its largest environment.
func openScale(b *testing.B, name string) *Server {
	dbURL, st, pool := OpenDatabase(b, name)
	var orgID string
	_ = pool.QueryRow(context.Background(), `SELECT id FROM organizations WHERE name = 'Scale 0'`).Scan(&orgID)
	if orgID == "" {
		orgID = load(b, st, pool)
	}
	return Serve(b, st, orgID, dbURL, pool)
}

// clean deletes what earlier ingest phases added to the loaded database (their
// transaction ids start with "tx-", their accounts with "c"), so that every run reads the
// same data: the reads run before the ingest.
func (e *Server) clean(b *testing.B) {
	ctx := context.Background()
	t0 := time.Now()
	var n int64
	for _, sql := range []string{
		`DELETE FROM usage_events WHERE transaction_id LIKE 'tx-%'`,
		`DELETE FROM usage_batches WHERE transaction_id LIKE 'tx-%'`,
		`DELETE FROM usage_rollups WHERE account_id LIKE 'c%\_acct\_%'`,
	} {
		tag, err := e.Pool.Exec(ctx, sql)
		if err != nil {
			b.Fatal(err)
		}
		n += tag.RowsAffected()
	}
	if n > 0 {
		for _, t := range []string{"usage_events", "usage_batches", "usage_rollups"} {
			if _, err := e.Pool.Exec(ctx, "VACUUM ANALYZE "+t); err != nil {
				b.Fatal(err)
			}
		}
	}
	fmt.Printf("clean: %d rows of earlier ingest phases deleted in %.1f s\n", n, time.Since(t0).Seconds())
}

func (e *Server) get(path string) (time.Duration, error) {
	msg, d, err := e.Get(path)
	if err != nil {
		return 0, err
	}
	if !bytes.Contains(msg, []byte(`"object":"list"`)) {
		return 0, fmt.Errorf("GET %s: not a list: %.200s", path, msg)
	}
	return d, nil
}

// samples are real values of the loaded environment the reads ask for.
type samples struct {
	start, end time.Time
	accounts   []string    // weighted by activity (sampled rows) and uniform over names
	cursors    []string    // usage event ids anywhere in the table
	acctCursor [][2]string // (account, usage event id of that account)
	combos     [][2]string // (product, metric)
	events     []string    // event ids anywhere
	objects    []string    // event object ids
	typeCursor [][2]string // (type, event id of that type)
}

func (e *Server) sample(b *testing.B) *samples {
	ctx := context.Background()
	s := &samples{}
	q := func(sql string, scan func(pgx.Rows) error, args ...any) {
		rows, err := e.Pool.Query(ctx, sql, args...)
		if err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				b.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}
	q(`SELECT min(received_at), max(received_at) FROM usage_batches WHERE transaction_id LIKE 'load-%'`,
		func(r pgx.Rows) error { return r.Scan(&s.start, &s.end) })
	q(`SELECT id, account_id, product, metric_name FROM usage_events TABLESAMPLE SYSTEM (0.05) WHERE environment_id = $1 LIMIT 400`,
		func(r pgx.Rows) error {
			var id, a, p, m string
			if err := r.Scan(&id, &a, &p, &m); err != nil {
				return err
			}
			s.cursors = append(s.cursors, id)
			s.accounts = append(s.accounts, a)
			s.acctCursor = append(s.acctCursor, [2]string{a, id})
			s.combos = append(s.combos, [2]string{p, m})
			return nil
		}, e.EnvID)
	for i := range 200 {
		s.accounts = append(s.accounts, fmt.Sprintf("acct_%d", (i*37)%scaleAccounts))
	}
	q(`SELECT id, object_id, type FROM events TABLESAMPLE SYSTEM (0.5) WHERE environment_id = $1 LIMIT 400`,
		func(r pgx.Rows) error {
			var id, o, t string
			if err := r.Scan(&id, &o, &t); err != nil {
				return err
			}
			s.events = append(s.events, id)
			s.objects = append(s.objects, o)
			s.typeCursor = append(s.typeCursor, [2]string{t, id})
			return nil
		}, e.EnvID)
	if len(s.cursors) == 0 || len(s.events) == 0 {
		b.Fatal("the loaded database has no rows to sample")
	}
	return s
}

type readKind struct {
	name string
	path func(*rand.Rand) string
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func (s *samples) window(r *rand.Rand, d time.Duration) (string, string) {
	span := s.end.Sub(s.start) - d
	from := s.start.Add(time.Duration(r.Int64N(int64(span)))).Truncate(time.Second)
	return from.UTC().Format(time.RFC3339), from.Add(d).UTC().Format(time.RFC3339)
}

func (s *samples) kinds() []readKind {
	v := url.QueryEscape
	return []readKind{
		{"usage list, newest", func(*rand.Rand) string { return "/v1/usage/events" }},
		{"usage list, limit=100", func(*rand.Rand) string { return "/v1/usage/events?limit=100" }},
		{"usage list, account_id", func(r *rand.Rand) string { return "/v1/usage/events?account_id=" + v(pick(r, s.accounts)) }},
		{"usage list, product+metric_name", func(r *rand.Rand) string {
			c := pick(r, s.combos)
			return "/v1/usage/events?product=" + v(c[0]) + "&metric_name=" + v(c[1])
		}},
		{"usage list, account_id+from/to (1 day)", func(r *rand.Rand) string {
			f, t := s.window(r, 24*time.Hour)
			return "/v1/usage/events?account_id=" + v(pick(r, s.accounts)) + "&from=" + v(f) + "&to=" + v(t)
		}},
		{"usage list, from/to (1 hour)", func(r *rand.Rand) string {
			f, t := s.window(r, time.Hour)
			return "/v1/usage/events?from=" + v(f) + "&to=" + v(t)
		}},
		{"usage list, from/to (1 day)", func(r *rand.Rand) string {
			f, t := s.window(r, 24*time.Hour)
			return "/v1/usage/events?from=" + v(f) + "&to=" + v(t)
		}},
		{"usage list, starting_after (deep)", func(r *rand.Rand) string { return "/v1/usage/events?starting_after=" + pick(r, s.cursors) }},
		{"usage list, account_id+starting_after", func(r *rand.Rand) string {
			c := pick(r, s.acctCursor)
			return "/v1/usage/events?account_id=" + v(c[0]) + "&starting_after=" + c[1]
		}},
		{"summary hour, from/to (1 day)", func(r *rand.Rand) string {
			f, t := s.window(r, 24*time.Hour)
			return "/v1/usage/summary?resolution=hour&from=" + v(f) + "&to=" + v(t)
		}},
		{"summary minute, from/to (1 hour)", func(r *rand.Rand) string {
			f, t := s.window(r, time.Hour)
			return "/v1/usage/summary?resolution=minute&from=" + v(f) + "&to=" + v(t)
		}},
		{"summary day, account_id (all)", func(r *rand.Rand) string {
			return "/v1/usage/summary?resolution=day&account_id=" + v(pick(r, s.accounts))
		}},
		{"summary hour, account+product+metric (7 d)", func(r *rand.Rand) string {
			c := pick(r, s.combos)
			f, t := s.window(r, 7*24*time.Hour)
			return "/v1/usage/summary?resolution=hour&account_id=" + v(pick(r, s.accounts)) + "&product=" + v(c[0]) +
				"&metric_name=" + v(c[1]) + "&from=" + v(f) + "&to=" + v(t)
		}},
		{"summary day, product+metric (all)", func(r *rand.Rand) string {
			c := pick(r, s.combos)
			return "/v1/usage/summary?resolution=day&product=" + v(c[0]) + "&metric_name=" + v(c[1])
		}},
		{"summary week, no filter", func(*rand.Rand) string { return "/v1/usage/summary?resolution=week" }},
		{"summary month, no filter", func(*rand.Rand) string { return "/v1/usage/summary?resolution=month" }},
		{"events list, newest", func(*rand.Rand) string { return "/v1/events" }},
		{"events list, type", func(r *rand.Rand) string { return "/v1/events?type=" + pick(r, s.typeCursor)[0] }},
		{"events list, status=failed", func(*rand.Rand) string { return "/v1/events?status=failed" }},
		{"events list, object_id", func(r *rand.Rand) string { return "/v1/events?object_id=" + pick(r, s.objects) }},
		{"events list, created range (1 day)", func(r *rand.Rand) string {
			f, t := s.window(r, 24*time.Hour)
			return "/v1/events?created_after=" + v(f) + "&created_before=" + v(t)
		}},
		{"events list, starting_after (deep)", func(r *rand.Rand) string { return "/v1/events?starting_after=" + pick(r, s.events) }},
		{"events list, type+starting_after (deep)", func(r *rand.Rand) string {
			c := pick(r, s.typeCursor)
			return "/v1/events?type=" + c[0] + "&starting_after=" + c[1]
		}},
	}
}

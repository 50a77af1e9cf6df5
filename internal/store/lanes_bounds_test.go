package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// heavyLane is the waiting backlog of §21's heavy lane: behind one released delivery
// to a dead receiver.
const heavyLane = 100_000

// seedHeavyLanes writes, by SQL, on PostgreSQL, to the ordered endpoint endpointID of
// db's environment: the lane "heavy" (a released delivery, retrying, and heavyLane
// waiting behind it, the i-th waiting since i×3 s ago: most for longer than a day),
// 2,000 lanes "o-…" of a released delivery silent for 30 days (its event dispatched)
// and one waiting, and 100 stuck lanes "z-…" of one waiting delivery and none released.
func seedHeavyLanes(t *testing.T, db seeded, endpointID string, now time.Time) {
	t.Helper()
	env := db.env
	for _, l := range []struct {
		objects string // SQL yielding object ids
		n       int    // deliveries a lane
		head    bool
		headAge string // the released one's age
		step    string // each waiting one's age, times its sequence
	}{
		{`SELECT 'heavy'`, heavyLane + 1, true, "3 seconds", "3 seconds"},
		{`SELECT 'o-' || lpad(i::text, 5, '0') FROM generate_series(1, 2000) i`, 2, true, "30 days", "1 minute"},
		{`SELECT 'z-' || lpad(i::text, 5, '0') FROM generate_series(1, 100) i`, 1, false, "", "1 minute"},
	} {
		exec(t, db, `INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id, time,
			payload, status, seq, sequence, dispatched_at, created_at, updated_at)
			SELECT 'ev-' || o || '-' || s, ?, ?, ?, 'account-updated', 'account', o, '0', '{}', 'retrying', 1, s, ?, ?, ?
			FROM (`+l.objects+`) AS objs(o), generate_series(1, ?) s`,
			env.OrganizationID, env.ID, env.Name, now, now, now, l.n)
		status, waiting, age := `'pending'`, `'ev-' || e.object_id || '-' || (e.sequence - 1)`, `e.sequence * INTERVAL '`+l.step+`'`
		if l.head {
			status = `CASE WHEN e.sequence = 1 THEN 'retrying' ELSE 'pending' END`
			waiting = `CASE WHEN e.sequence = 1 THEN '' ELSE ` + waiting + ` END`
			age = `CASE WHEN e.sequence = 1 THEN INTERVAL '` + l.headAge + `' ELSE ` + age + ` END`
		} else {
			waiting = `'ev-gone'`
		}
		exec(t, db, `INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status, retry_initial_interval_ms,
			retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, last_error, created_at, updated_at,
			object_id, sequence, ordered, waiting_for)
			SELECT 'd-' || e.id, e.id, e.environment_id, ?, `+status+`, 3600000, 1, 3600000, 6, '', ?, CAST(? AS TIMESTAMPTZ) - `+age+`,
			e.object_id, e.sequence, TRUE, `+waiting+`
			FROM events e WHERE e.environment_id = ? AND e.object_id IN (`+l.objects+`)`,
			endpointID, now, now, env.ID)
	}
	exec(t, db, "ANALYZE events, webhook_deliveries")
}

// CONTRACT §21, §26: the minute check's lane reads cost their page, not the backlog.
// With one lane of 100,000 deliveries waiting behind a dead receiver (most past a day),
// 2,000 lanes whose heads are silent and 100 stuck lanes, each read — expired waits,
// silent released deliveries, the stuck-lane walk, a re-enabled endpoint's lanes — is
// an index scan stopped at its page of 100 (no sequential scan, no sort of the backlog),
// where the statements before migration 138 read the whole backlog (figures logged,
// measured in the same run: docs/benchmarks.md). And the walk, pass after pass, reaches
// every stuck lane.
func TestLaneChecksReadTheirPage(t *testing.T) {
	db, ok := bothDatabases(t, models.EnvSandbox)["postgres"]
	if !ok {
		t.Skip("PostgreSQL only: the plans are the production ones")
	}
	ctx := context.Background()
	ep := newEndpoint(t, db, "https://dead.example/h", nil, true)
	exec(t, db, `UPDATE webhook_endpoints SET ordering = 'object' WHERE id = ?`, ep.ID)
	now := time.Now().UTC()
	seedHeavyLanes(t, db, ep.ID, now)

	const page = 100
	before := now.Add(-24 * time.Hour)
	after, err := db.st.ExplainLaneChecks(ctx, before, ep.ID, page, false)
	if err != nil {
		t.Fatal(err)
	}
	base, err := db.st.ExplainLaneChecks(ctx, before, ep.ID, page, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"expired waits", "silent released", "stuck lanes", "lanes of endpoint"} {
		a, b := after[name], base[name]
		t.Logf("%s: %v; before migration 138: %v; %.0f× fewer rows", name, a, b, float64(b.Rows)/float64(max(a.Rows, 1)))
		if a.Rows > 4*page || strings.Contains(strings.Join(a.Scans, ";"), "Seq Scan") {
			t.Errorf("%s reads %d rows (%v), want at most %d by index", name, a.Rows, a.Scans, 4*page)
		}
	}
	if b := base["expired waits"].Rows; b < heavyLane/2 {
		t.Errorf("the baseline's expired waits read %d rows: the seed is not the heavy lane", b)
	}

	stuck := map[string]bool{}
	for range 4 { // 2,101 lanes, 1,000 a pass: the walk wraps in the third
		lanes, err := db.st.StuckLanes(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lanes {
			stuck[l.ObjectID] = true
		}
	}
	if len(stuck) != 100 {
		t.Errorf("the walk found %d stuck lanes in four passes, want the 100 z-…", len(stuck))
	}
}

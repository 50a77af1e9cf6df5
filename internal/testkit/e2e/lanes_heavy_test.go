package e2e

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
)

// heavyLane is the waiting backlog of the heavy lane: behind one released delivery to a
// dead receiver.
const heavyLane = 100_000

// seedHeavyLane writes, by SQL, environment env's lane of object "heavy" to the ordered
// endpoint endpointID: a released delivery, retrying (its last attempt now), and heavyLane
// deliveries waiting behind it, each behind the one before, since `since` (events 1 to
// heavyLane + 1, the object's sequence row past them).
func seedHeavyLane(t *testing.T, sql *gorm.DB, env models.Env, endpointID string, since time.Time) {
	t.Helper()
	now := time.Now().UTC()
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id, time, payload,
	status, seq, sequence, dispatched_at, created_at, updated_at)
SELECT 'ev-heavy-' || CAST(i AS TEXT), ?, ?, ?, 'account-updated', 'account', 'heavy', '0', '{}', 'retrying', 1, i, ?, ?, ? FROM g`,
			[]any{heavyLane + 1, env.OrganizationID, env.ID, env.Name, now, now, now}},
		{`INSERT INTO object_sequences (environment_id, object_id, last_sequence) VALUES (?, 'heavy', ?)`,
			[]any{env.ID, heavyLane + 1}},
		{`INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status, retry_initial_interval_ms,
	retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, last_error, created_at, updated_at,
	object_id, sequence, ordered, waiting_for)
SELECT 'd-' || e.id, e.id, e.environment_id, ?, CASE WHEN e.sequence = 1 THEN 'retrying' ELSE 'pending' END,
	3600000, 1, 3600000, 6, '', ?, ?, 'heavy', e.sequence, TRUE,
	CASE WHEN e.sequence = 1 THEN '' ELSE 'ev-heavy-' || CAST(e.sequence - 1 AS TEXT) END
FROM events e WHERE e.environment_id = ? AND e.object_id = 'heavy'`,
			[]any{endpointID, since, since, env.ID}},
		{`UPDATE webhook_deliveries SET updated_at = ? WHERE id = 'd-ev-heavy-1'`, []any{now}},
	} {
		if err := sql.Exec(stmt.sql, stmt.args...).Error; err != nil {
			t.Fatalf("seed the heavy lane: %v", err)
		}
	}
	if sql.Dialector.Name() == "postgres" {
		if err := sql.Exec("ANALYZE events, webhook_deliveries").Error; err != nil {
			t.Fatal(err)
		}
	}
}

// CONTRACT §21, §26 on the dev shape (embedded Temporal, API and worker in one process):
// environment A's ordered endpoint has a dead receiver and a lane of 100,000 deliveries
// waiting behind its head, every one of them waiting for longer than the order's limit.
// While the minute check's lane sweeps run, a pass every 100 ms (webhook.CheckLanes, as
// the health check's activity calls it, with its page), environment B's requests are
// answered and its change is delivered to its own ordered endpoint; each pass ends one
// page of A's expired waits (order_wait_expired), never the backlog, and A's head is
// left released. (That each pass reads its page by index, not the backlog, is
// store.TestLaneChecksReadTheirPage.)
func TestAHeavyLaneLeavesAnotherEnvironmentServed(t *testing.T) {
	tt := newTwoTenants(t, app.Parts{})
	ctx := context.Background()
	db, sql := tt.db, tt.db.SQL()
	rcB := webhooktest.NewReceiver(t)
	dead := tt.endpoint(t, tt.a, `{"url":"https://127.0.0.1:9/dead","ordering":"object"}`)
	tt.endpoint(t, tt.b, `{"url":"`+rcB.URL+`/b","ordering":"object"}`)
	seedHeavyLane(t, sql, db.Env, dead, time.Now().UTC().Add(-2*webhook.DefaultOrderMaxWait))

	const page = workflows.HealthCheckBatch
	stop, passes := make(chan struct{}), make(chan []webhook.LanesChecked, 1)
	go func() {
		var done []webhook.LanesChecked
		defer func() { passes <- done }()
		for {
			res, err := webhook.CheckLanes(ctx, db.Store, time.Now().UTC(), webhook.DefaultOrderMaxWait, page)
			if err != nil {
				t.Errorf("lane check pass %d: %v", len(done)+1, err)
				return
			}
			done = append(done, res)
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	var acctB struct{ ID string }
	if err := tt.b.post(ctx, "/v1/accounts", `{"name":"B meanwhile"}`, &acctB); err != nil {
		t.Fatal(err)
	}
	if err := tt.b.get(ctx, "/v1/webhook_endpoints", nil); err != nil {
		t.Fatalf("B's endpoints while A's lane is checked: %v", err)
	}
	waitFor(t, 2*time.Minute, "B's change delivered to B's receiver", func() bool { return len(rcB.Received()) > 0 })
	close(stop)
	done := <-passes

	expired := countSQL(t, sql, `SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND last_error = ?`,
		dead, models.DeliveryOrderWaitExpired)
	if len(done) == 0 || expired != int64(len(done)*page) {
		t.Fatalf("%d passes ended %d expired waits, want one page (%d) each", len(done), expired, page)
	}
	for i, res := range done {
		if res.Expired != page || res.Closed != 0 || res.Released != 0 {
			t.Fatalf("pass %d: %+v, want one page of expired waits and nothing else", i+1, res)
		}
	}
	if n := countSQL(t, sql, `SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'retrying'
		AND waiting_for = '' AND sequence = 1`, dead); n != 1 {
		t.Fatalf("A's head: %d released, want it still released and retrying", n)
	}
	if expired >= heavyLane {
		t.Fatal("the passes ended the whole lane before B was served: the test proves no order")
	}
	t.Logf("B served while %d lane check passes of %d ran; %d of A's %d waiting deliveries still waiting",
		len(done), page, heavyLane-expired, heavyLane)
}

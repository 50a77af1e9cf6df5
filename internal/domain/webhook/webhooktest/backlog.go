package webhooktest

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// SeedBacklog writes n events of env, each with one retrying delivery to endpointID: a
// dead receiver's backlog (CONTRACT §21), in two statements whatever n, on PostgreSQL or
// SQLite (raw's dialect). The events are dispatched already (no claimer or sweeper
// starts a run for them) and object_id "backlog" tells them apart.
func SeedBacklog(t testing.TB, raw *gorm.DB, env models.Env, endpointID string, n int) {
	t.Helper()
	newID := "lower(hex(randomblob(16)))"
	if raw.Dialector.Name() == "postgres" {
		newID = "gen_random_uuid()::text"
	}
	now := time.Now().UTC()
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id, time, payload,
	status, seq, dispatched_at, created_at, updated_at)
SELECT ` + newID + `, ?, ?, ?, 'account-updated', 'account', 'backlog', '0', '{}', ?, 1, ?, ?, ? FROM g`,
			[]any{n, env.OrganizationID, env.ID, env.Name, models.EventRetrying, now, now, now}},
		{`INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status, retry_initial_interval_ms,
	retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, last_error, created_at, updated_at)
SELECT ` + newID + `, e.id, e.environment_id, ?, ?, 3600000, 1, 3600000, 6, 'status 503', e.created_at, e.created_at
FROM events e WHERE e.environment_id = ? AND e.object_id = 'backlog'
AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
			[]any{endpointID, models.EventRetrying, env.ID}},
	} {
		if err := raw.Exec(stmt.sql, stmt.args...).Error; err != nil {
			t.Fatalf("seed a backlog of %d deliveries: %v", n, err)
		}
	}
	if raw.Dialector.Name() == "postgres" {
		// The statistics autovacuum would gather soon after such a load in production:
		// without them the planner takes every new table for empty.
		if err := raw.Exec("ANALYZE events, webhook_deliveries").Error; err != nil {
			t.Fatal(err)
		}
	}
}

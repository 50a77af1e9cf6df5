package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Every event list filter is served by an index (CONTRACT §17), on both databases: a
// filter that matches almost nothing — a status ten rows have, a type no row has, a
// type and status each common but never together, an unknown object — must not walk
// the environment's rows (nor, on PostgreSQL, every delivery, for a status of one
// endpoint's deliveries). The table is moderate (12,000 events here, 3,000 in another
// environment), analyzed, and the planners run with their default settings: without
// the indexes of migration 70, both walk events_env_created (or PostgreSQL scans the
// table) for the first three.
func TestEventFiltersUseIndexes(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		st, env := db.st, db.env
		have, err := st.IndexesForTest(ctx, "events")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range append([]string{"events_env_created", "events_env_object"}, store.EventFilterIndexes...) {
			if !slices.Contains(have, want) {
				t.Errorf("index %s missing: events has %v", want, have)
			}
		}
		other, err := st.Environment(ctx, env.OrganizationID, models.EnvLive)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		seedFilterEvents(t, st, env, 12_000, now)
		seedFilterEvents(t, st, other, 3_000, now)
		// One delivery per event not skipped, with its status, to endpoint ep-1.
		if err := st.ExecForTest(ctx, `INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status,
				retry_initial_interval_ms, retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, created_at, updated_at)
				SELECT 'd-' || id, id, environment_id, 'ep-1', status, 1000, 1, 1000, 6, created_at, updated_at FROM events WHERE status <> 'skipped'`); err != nil {
			t.Fatal(err)
		}
		if err := st.ExecForTest(ctx, "ANALYZE"); err != nil {
			t.Fatal(err)
		}
		from, to := now.Add(-48*time.Hour), now.Add(-24*time.Hour)
		for _, c := range []struct {
			name  string
			f     store.EventFilter
			index string
		}{
			{"status ten rows have", store.EventFilter{Status: models.EventRetrying}, "events_env_status"},
			{"type no row has", store.EventFilter{Type: "account-deleted"}, "events_env_type"},
			{"type and status never together", store.EventFilter{Type: "deal-signed", Status: models.EventSkipped}, "events_env_type_status"},
			{"status in a range", store.EventFilter{Status: models.EventRetrying, CreatedAfter: &from, CreatedBefore: &to}, "events_env_status"},
			{"unknown object", store.EventFilter{ObjectID: uuid.NewString()}, "events_env_object"},
			{"object and status", store.EventFilter{ObjectID: "obj-7", Status: models.EventFailed}, "events_env_object"},
			// SQLite runs EXISTS as a subquery per event; PostgreSQL reads the
			// deliveries first.
			{"endpoint and a status ten deliveries have", store.EventFilter{EndpointID: "ep-1", Status: models.EventRetrying},
				map[string]string{"postgres": "webhook_deliveries_env_endpoint"}[db.name]},
			// Filters that match many rows: any index walk stops after a page; the
			// plans are logged (go test -v), not checked.
			{"common type", store.EventFilter{Type: "deal-updated"}, ""},
			{"common status", store.EventFilter{Status: models.EventFailed}, ""},
			{"created range", store.EventFilter{CreatedAfter: &from, CreatedBefore: &to}, ""},
			{"type in a range", store.EventFilter{Type: "deal-updated", CreatedAfter: &from, CreatedBefore: &to}, ""},
			{"type and status", store.EventFilter{Type: "deal-updated", Status: models.EventFailed}, ""},
		} {
			plan, err := st.ExplainEvents(ctx, env, c.f, store.Page{Limit: 20}, false)
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			t.Logf("%s:\n%s", c.name, text)
			if c.index != "" && (!strings.Contains(text, c.index) || strings.Contains(text, "Seq Scan") || strings.Contains(text, "SCAN events")) {
				t.Errorf("%s: the plan does not use %s:\n%s", c.name, c.index, text)
			}
		}
	})
}

// seedFilterEvents writes n events created over the last 30 days: the six seed types
// but account-deleted, status delivered, failed (3 %), skipped (the account types'
// only: no endpoint subscribes to them), and retrying for ten rows.
func seedFilterEvents(t *testing.T, st *store.Store, env store.Env, n int, now time.Time) {
	t.Helper()
	types := []string{"deal-created", "deal-updated", "deal-updated", "deal-signed", "deal-active", "account-created", "account-updated", "account-updated"}
	events := make([]models.Event, n)
	for i := range events {
		typ := types[i%len(types)]
		status := models.EventDelivered
		switch {
		case i%(n/10) == 5:
			status = models.EventRetrying
		case strings.HasPrefix(typ, "account"):
			status = models.EventSkipped
		case i%33 == 0:
			status = models.EventFailed
		}
		at := now.Add(-time.Duration(n-i) * 30 * 24 * time.Hour / time.Duration(n))
		objectType, _, _ := strings.Cut(typ, "-")
		events[i] = models.Event{ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
			Environment: env.Name, Type: typ, ObjectType: objectType, ObjectID: fmt.Sprint("obj-", i%2000),
			Time: fmt.Sprint(at.Unix()), Payload: "{}", Status: status, Seq: 1, DispatchedAt: &at,
			CreatedAt: at, UpdatedAt: at}
	}
	if err := st.InsertEventsForTest(context.Background(), events); err != nil {
		t.Fatal(err)
	}
}

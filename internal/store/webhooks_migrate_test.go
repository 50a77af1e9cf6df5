package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A database of the single-endpoint releases, with data, migrates to many endpoints:
// each environment's endpoint is the first row, every event gets one delivery to it with
// the event's status and its attempts linked, and an environment without an endpoint
// gets none. The migrated data then works with the new functions.
func TestMigrateSingleEndpointData(t *testing.T) {
	// 69 (webhook_deliveries_replays), 97 (webhook_endpoints_filter), 102
	// (webhook_endpoint_headers), 110 (an index), 113 (receivers_signals), 136-138
	// (event sequences and order lanes) and 140 (webhook_endpoints_rate_limit) came later and need the tables of 32 and 31.
	forMigratedWithout(t, []int{31, 32, 33, 34, 69, 97, 102, 110, 113, 136, 137, 138, 140}, func(t *testing.T, ctx context.Context, st *store.Store) {
		org, err := orgs.CreateWithHash(ctx, st, "Acme", "old@acme.test", "x")
		if err != nil {
			t.Fatal(err)
		}
		live, _ := st.Environment(ctx, org.ID, models.EnvLive)
		sandbox, _ := st.Environment(ctx, org.ID, models.EnvSandbox)
		org2, _ := orgs.CreateWithHash(ctx, st, "Bare", "bare@acme.test", "x")
		bare, _ := st.Environment(ctx, org2.ID, models.EnvLive)
		now := time.Now().UTC().Truncate(time.Second)
		exec := func(sql string, args ...any) {
			t.Helper()
			if err := st.ExecForTest(ctx, sql, args...); err != nil {
				t.Fatal(err)
			}
		}
		endpoint := func(env store.Env, enabled bool) string {
			id := uuid.NewString()
			exec(`INSERT INTO webhook_endpoints (id, organization_id, environment_id, url, method, enabled, secret, created_at, updated_at)
					VALUES (?, ?, ?, 'https://old.example/h', 'POST', ?, 'whsec_old', ?, ?)`, id, env.OrganizationID, env.ID, enabled, now, now)
			return id
		}
		event := func(env store.Env, status string) string {
			id := uuid.NewString()
			exec(`INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id, time, payload, status, seq, created_at, updated_at)
					VALUES (?, ?, ?, ?, 'account-created', 'account', 'a1', '1', '{}', ?, 1, ?, ?)`, id, env.OrganizationID, env.ID, env.Name, status, now, now)
			return id
		}
		attemptRow := func(env store.Env, eventID, outcome string) {
			exec(`INSERT INTO delivery_attempts (id, event_id, environment_id, run_id, number, trigger, started_at, outcome, created_at)
					VALUES (?, ?, ?, 'r1', 1, 'scheduled', ?, ?, ?)`, uuid.NewString(), eventID, env.ID, now, outcome, now)
		}
		liveEP, sandboxEP := endpoint(live, true), endpoint(sandbox, false)
		delivered, failed, skipped := event(live, models.EventDelivered), event(live, models.EventFailed), event(live, models.EventSkipped)
		attemptRow(live, delivered, models.AttemptSucceeded)
		attemptRow(live, failed, models.AttemptFailed)
		attemptRow(live, failed, models.AttemptFailed)
		retrying := event(sandbox, models.EventRetrying)
		attemptRow(sandbox, retrying, models.AttemptFailed)
		lonely := event(bare, models.EventSkipped)

		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}

		ep, err := st.WebhookEndpoint(ctx, live)
		if err != nil || ep.ID != liveEP || !ep.Enabled || ep.DisabledReason != "" || ep.Secret != "whsec_old" ||
			len(ep.EventTypes) != 1 || ep.EventTypes[0] != "*" || ep.RetryPolicy != models.DefaultRetryPolicy || ep.Description != "" {
			t.Fatalf("live endpoint after migration: %+v %v", ep, err)
		}
		if ep, _ := st.WebhookEndpoint(ctx, sandbox); ep.ID != sandboxEP || ep.Enabled || ep.DisabledReason != models.DisabledManual {
			t.Fatalf("sandbox endpoint after migration: %+v", ep)
		}
		for eventID, want := range map[string]string{delivered: models.EventDelivered, failed: models.EventFailed, skipped: models.EventSkipped} {
			ds, err := st.EventDeliveries(ctx, live, eventID)
			if err != nil || len(ds) != 1 || ds[0].EndpointID != liveEP || ds[0].Status != want || ds[0].RetryPolicy != models.DefaultRetryPolicy {
				t.Fatalf("deliveries of the %s event: %+v %v", want, ds, err)
			}
			as, _ := st.DeliveryAttempts(ctx, live, eventID)
			for _, a := range as {
				if a.DeliveryID != ds[0].ID || a.EndpointID != liveEP {
					t.Fatalf("attempt of the %s event not linked: %+v", want, a)
				}
			}
		}
		if ds, _ := st.EventDeliveries(ctx, sandbox, retrying); len(ds) != 1 || ds[0].Status != models.EventRetrying || ds[0].EndpointID != sandboxEP {
			t.Fatalf("deliveries of the retrying event: %+v", ds)
		}
		if ds, _ := st.EventDeliveries(ctx, bare, lonely); len(ds) != 0 {
			t.Fatalf("an environment without endpoint got deliveries: %+v", ds)
		}

		// An old run's attempt finds the migrated delivery; a second endpoint is allowed.
		a := models.DeliveryAttempt{EventID: retrying, RunID: "r1", Number: 2, Trigger: models.TriggerScheduled,
			StartedAt: time.Now().UTC(), Outcome: models.AttemptSucceeded}
		if err := webhooktest.RecordAttempt(ctx, st, sandbox, &a, models.EventDelivered); err != nil {
			t.Fatal(err)
		}
		if ev, _, _ := st.EventByID(ctx, retrying); ev.Status != models.EventDelivered || a.EndpointID != sandboxEP {
			t.Fatalf("old run's record after migration: status %q, attempt %+v", ev.Status, a)
		}
		if _, err := webhook.CreateEndpoint(ctx, st, live, models.WebhookEndpoint{URL: "https://new.example/", Method: "POST",
			Enabled: true, Secret: "whsec_new"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatalf("second endpoint after migration: %v", err)
		}
	})
}

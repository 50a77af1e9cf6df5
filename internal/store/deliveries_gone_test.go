package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/catalog/catalogtest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// A delivery that ended failed with error gone (its receiver answered 410) disables its
// endpoint at once, even with automatic disabling off, with reason gone and one
// endpoint-disabled event; a retried call, or one after re-enabling, changes nothing
// (CONTRACT §23). Both databases accept the reason and still refuse an unknown one.
func TestGoneDeliveryDisablesItsEndpoint(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		gone := newEndpoint(t, db, "https://gone.example/hooks?token=t1", nil, true)
		ops := newEndpoint(t, db, "https://ops.example/", []string{"endpoint-disabled"}, true)
		ev := newAccountEvent(t, db)
		d := deliveriesByEndpoint(t, db, ev.ID)[gone.ID]
		a := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled,
			StartedAt: time.Now().UTC(), StatusCode: 410, Outcome: models.AttemptFailed, Error: models.DeliveryGone}
		if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &a, models.EventFailed); err != nil {
			t.Fatal(err)
		}

		for i, want := range []bool{true, false} { // the settle, then its retry
			if disabled, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", nil, 0); err != nil || disabled != want {
				t.Fatalf("call %d: disabled=%v %v, want %v", i+1, disabled, err, want)
			}
		}
		ep, err := db.st.WebhookEndpointByID(ctx, db.env, gone.ID)
		if err != nil || ep.Enabled || ep.DisabledReason != models.DisabledGone {
			t.Fatalf("endpoint: enabled=%v reason=%q (%v), want disabled gone", ep.Enabled, ep.DisabledReason, err)
		}
		if got := deliveriesByEndpoint(t, db, ev.ID)[gone.ID]; got.Status != models.EventFailed || got.LastError != models.DeliveryGone {
			t.Fatalf("delivery %s %q, want failed gone", got.Status, got.LastError)
		}
		notices, _, err := db.st.Events(ctx, db.env, store.EventFilter{Type: "endpoint-disabled"}, store.Page{Limit: 10})
		if err != nil || len(notices) != 1 {
			t.Fatalf("endpoint-disabled events: %d (%v), want 1", len(notices), err)
		}
		var body struct {
			Endpoint map[string]any `json:"webhook_endpoint"`
		}
		if err := json.Unmarshal([]byte(notices[0].Payload), &body); err != nil {
			t.Fatal(err)
		}
		if body.Endpoint["disabled_reason"] != "gone" || body.Endpoint["host"] != "gone.example" {
			t.Fatalf("notice %s", notices[0].Payload)
		}
		if typ, err := catalogtest.Validate([]byte(notices[0].Payload)); err != nil || typ != "endpoint-disabled" {
			t.Fatalf("notice does not match the catalog's schema: %s %v", typ, err)
		}
		if got := deliveriesByEndpoint(t, db, notices[0].ID); len(got) != 1 || got[ops.ID].ID == "" {
			t.Fatalf("notice deliveries %+v, want one to the endpoint listing endpoint-disabled", got)
		}

		// Re-enabled after the 410: a late retry of the settle leaves it enabled.
		on := true
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, gone.ID, webhook.EndpointPatch{Enabled: &on}, time.Now().UTC().Add(time.Second), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		if disabled, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", nil, 0); err != nil || disabled {
			t.Fatalf("after re-enabling: disabled=%v %v", disabled, err)
		}

		// A connection of its own (SQLite's schema edited in place) still checks the reason.
		raw := testdb.Raw(t, db.name, db.url)
		if err := raw.Exec("UPDATE webhook_endpoints SET disabled_reason = 'gone' WHERE id = ?", gone.ID).Error; err != nil {
			t.Fatalf("gone refused: %v", err)
		}
		if err := raw.Exec("UPDATE webhook_endpoints SET disabled_reason = 'bogus' WHERE id = ?", gone.ID).Error; err == nil {
			t.Fatal("an unknown reason was accepted")
		}
	})
}

// A 410 whose attempt record was lost: the workflow's mark carries reason gone, which
// ends the delivery failed with gone, disables the endpoint at once and announces no
// delivery-exhausted.
func TestGoneMarkWithoutItsRecord(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		gone := newEndpoint(t, db, "https://gone.example/", nil, true)
		newEndpoint(t, db, "https://ops.example/", []string{"endpoint-disabled", "delivery-exhausted"}, true)
		ev := newAccountEvent(t, db)
		d := deliveriesByEndpoint(t, db, ev.ID)[gone.ID]
		a := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled,
			StartedAt: time.Now().UTC(), StatusCode: 500, Outcome: models.AttemptFailed, Error: "status 500"}
		if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &a, models.EventRetrying); err != nil {
			t.Fatal(err)
		}
		if disabled, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, models.DeliveryGone, nil, 0); err != nil || !disabled {
			t.Fatalf("mark gone: disabled=%v %v, want disabled", disabled, err)
		}
		ep, err := db.st.WebhookEndpointByID(ctx, db.env, gone.ID)
		if err != nil || ep.Enabled || ep.DisabledReason != models.DisabledGone {
			t.Fatalf("endpoint: enabled=%v reason=%q (%v), want disabled gone", ep.Enabled, ep.DisabledReason, err)
		}
		if got := deliveriesByEndpoint(t, db, ev.ID)[gone.ID]; got.Status != models.EventFailed || got.LastError != models.DeliveryGone {
			t.Fatalf("delivery %s %q, want failed gone", got.Status, got.LastError)
		}
		for typ, want := range map[string]int{"endpoint-disabled": 1, "delivery-exhausted": 0} {
			evs, _, err := db.st.Events(ctx, db.env, store.EventFilter{Type: typ}, store.Page{Limit: 10})
			if err != nil || len(evs) != want {
				t.Errorf("%s events: %d (%v), want %d", typ, len(evs), err, want)
			}
		}
	})
}

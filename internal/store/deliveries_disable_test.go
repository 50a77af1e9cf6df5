package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/catalog/catalogtest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A delivery that ends failed disables its endpoint when the endpoint's first failure
// since its last success (or re-enabling) is older than disableAfter; the
// endpoint-disabled event, host only, goes to the endpoints that list it, not to "*".
func TestMarkDeliveryFailedDisablesFailingEndpoint(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		dead := newEndpointAt(t, db, "https://user:pw@dead.example:8443/secret-path/sk_token?key=k1", nil, true, now.Add(-24*time.Hour))
		ops := newEndpoint(t, db, "https://ops.example/", []string{"endpoint-disabled"}, true)
		star := newEndpoint(t, db, "https://star.example/", nil, true)

		// Failures for 30 minutes, 1h allowed: a failed delivery keeps the endpoint.
		ev := newAccountEvent(t, db)
		d := deliveriesByEndpoint(t, db, ev.ID)[dead.ID]
		attempt(t, db, d, models.AttemptFailed, models.EventRetrying, now.Add(-30*time.Minute))
		if disabled, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", nil, time.Hour); err != nil || disabled {
			t.Fatalf("young failure: disabled=%v %v", disabled, err)
		}
		if d := deliveriesByEndpoint(t, db, ev.ID)[dead.ID]; d.Status != models.EventFailed || d.LastError != "status 500" {
			t.Fatalf("failed delivery: %+v", d)
		}
		if s := eventStatus(t, db, ev.ID); s != models.EventFailed {
			t.Fatalf("event: %q, want failed", s)
		}
		// 0 never disables.
		if disabled, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", nil, 0); err != nil || disabled {
			t.Fatalf("disableAfter 0: disabled=%v %v", disabled, err)
		}

		// The first failure is 2h old: disabled, once.
		ev2 := newAccountEvent(t, db)
		d2 := deliveriesByEndpoint(t, db, ev2.ID)[dead.ID]
		first := now.Add(-2 * time.Hour).Truncate(time.Second)
		attempt(t, db, d2, models.AttemptFailed, models.EventFailed, first)
		disabled, err := webhook.MarkDeliveryFailed(ctx, db.st, d2.ID, "", nil, time.Hour)
		if err != nil || !disabled {
			t.Fatalf("old failure: disabled=%v %v", disabled, err)
		}
		if again, err := webhook.MarkDeliveryFailed(ctx, db.st, d2.ID, "", nil, time.Hour); err != nil || again {
			t.Fatalf("second call: disabled=%v %v", again, err)
		}
		ep, _ := db.st.WebhookEndpointByID(ctx, db.env, dead.ID)
		if ep.Enabled || ep.DisabledReason != models.DisabledFailing || ep.FailingSince == nil || !ep.FailingSince.Equal(first) {
			t.Fatalf("endpoint after disabling: enabled=%v reason=%q since=%v, want failing since %v", ep.Enabled, ep.DisabledReason, ep.FailingSince, first)
		}

		notices, _, err := db.st.Events(ctx, db.env, store.EventFilter{Type: "endpoint-disabled"}, store.Page{Limit: 10})
		if err != nil || len(notices) != 1 {
			t.Fatalf("endpoint-disabled events: %v %v", notices, err)
		}
		var body struct {
			Event    struct{ ID, Type string }
			Endpoint map[string]any `json:"webhook_endpoint"`
		}
		if err := json.Unmarshal([]byte(notices[0].Payload), &body); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"id": dead.ID, "description": nil, "host": "dead.example:8443",
			"disabled_reason": "failing", "failing_since": first.Format(time.RFC3339)}
		if body.Event.ID != notices[0].ID || body.Event.Type != "endpoint-disabled" || len(body.Endpoint) != len(want) {
			t.Fatalf("notice body %s", notices[0].Payload)
		}
		for k, v := range want {
			if body.Endpoint[k] != v {
				t.Fatalf("notice %s = %v, want %v (body %s)", k, body.Endpoint[k], v, notices[0].Payload)
			}
		}
		if typ, err := catalogtest.Validate([]byte(notices[0].Payload)); err != nil || typ != "endpoint-disabled" {
			t.Fatalf("notice does not match the catalog's schema: %s %v", typ, err)
		}
		for _, leak := range []string{"secret-path", "sk_token", "key=", "user", "pw@"} {
			if strings.Contains(notices[0].Payload, leak) {
				t.Fatalf("notice leaks %q of the URL: %s", leak, notices[0].Payload)
			}
		}
		got := deliveriesByEndpoint(t, db, notices[0].ID)
		if len(got) != 1 || got[ops.ID].Status != models.EventPending {
			t.Fatalf("notice deliveries %+v, want one to the endpoint listing endpoint-disabled (not %s)", got, star.ID)
		}
		// New events skip the disabled endpoint.
		if got := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID); len(got) != 1 || got[star.ID].ID == "" {
			t.Fatalf("deliveries after disabling: %+v", got)
		}

		// Re-enabled: failures before it do not count, so the next failure keeps it.
		on := true
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, dead.ID, webhook.EndpointPatch{Enabled: &on}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		ev3 := newAccountEvent(t, db)
		d3 := deliveriesByEndpoint(t, db, ev3.ID)[dead.ID]
		attempt(t, db, d3, models.AttemptFailed, models.EventRetrying, time.Now().UTC())
		if disabled, err := webhook.MarkDeliveryFailed(ctx, db.st, d3.ID, models.DeliveryEndpointDisabled, nil, time.Hour); err != nil || disabled {
			t.Fatalf("after re-enabling: disabled=%v %v", disabled, err)
		}
		if d := deliveriesByEndpoint(t, db, ev3.ID)[dead.ID]; d.LastError != models.DeliveryEndpointDisabled {
			t.Fatalf("reason not kept: %+v", d)
		}
	})
}

// A success since the first failure restarts the window.
func TestSuccessRestartsFailingWindow(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		ep := newEndpointAt(t, db, "https://flaky.example/", nil, true, now.Add(-24*time.Hour))
		var last models.WebhookDelivery
		for _, step := range []struct {
			outcome string
			ago     time.Duration
		}{{models.AttemptFailed, 3 * time.Hour}, {models.AttemptSucceeded, 2 * time.Hour}, {models.AttemptFailed, 30 * time.Minute}} {
			d := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[ep.ID]
			status := models.EventFailed
			if step.outcome == models.AttemptSucceeded {
				status = models.EventDelivered
			}
			attempt(t, db, d, step.outcome, status, now.Add(-step.ago))
			last = d
		}
		if disabled, err := webhook.MarkDeliveryFailed(context.Background(), db.st, last.ID, "", nil, time.Hour); err != nil || disabled {
			t.Fatalf("failure 30m after a success: disabled=%v %v", disabled, err)
		}
	})
}

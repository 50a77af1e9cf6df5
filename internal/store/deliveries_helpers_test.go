package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// newEndpoint creates an endpoint subscribed to types (nil: ["*"]).
func newEndpoint(t testing.TB, db seeded, url string, types []string, enabled bool) models.WebhookEndpoint {
	t.Helper()
	return newEndpointAt(t, db, url, types, enabled, time.Now().UTC())
}

// newEndpointAt creates an endpoint as if at `at` (its enabled_at too).
func newEndpointAt(t testing.TB, db seeded, url string, types []string, enabled bool, at time.Time) models.WebhookEndpoint {
	t.Helper()
	ep, err := webhook.CreateEndpoint(context.Background(), db.st, db.env, models.WebhookEndpoint{
		URL: url, Method: "POST", EventTypes: types, Enabled: enabled, Secret: "whsec_" + uuid.NewString(),
	}, at, idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatalf("create endpoint %s: %v", url, err)
	}
	return ep
}

// newAccountEvent writes an account and its account-created event.
func newAccountEvent(t testing.TB, db seeded) models.Event {
	t.Helper()
	id := uuid.NewString()
	_, evs, err := insertAccount(context.Background(), db.st, db.env,
		models.Account{ID: id, Name: "Globex", Status: "draft", Properties: "{}"},
		func(a models.Account) []store.Emit {
			return []store.Emit{{Type: "account-created", ObjectType: "account", ObjectID: a.ID, Object: a}}
		})
	if err != nil || len(evs) != 1 {
		t.Fatalf("create account: %v %v", evs, err)
	}
	return evs[0]
}

// deliveriesByEndpoint maps endpoint id → delivery of the event.
func deliveriesByEndpoint(t *testing.T, db seeded, eventID string) map[string]models.WebhookDelivery {
	t.Helper()
	ds, err := db.st.EventDeliveries(context.Background(), db.env, eventID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]models.WebhookDelivery{}
	for _, d := range ds {
		out[d.EndpointID] = d
	}
	return out
}

func eventStatus(t *testing.T, db seeded, id string) string {
	t.Helper()
	ev, _, err := db.st.EventByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ev.Status
}

// attempt records an attempt of a delivery with the given outcome and delivery status.
func attempt(t *testing.T, db seeded, d models.WebhookDelivery, outcome, status string, at time.Time) {
	t.Helper()
	a := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "run-1", Number: 1,
		Trigger: models.TriggerScheduled, StartedAt: at, Outcome: outcome}
	if outcome == models.AttemptFailed {
		a.Error = "status 500"
	}
	if err := webhooktest.RecordAttempt(context.Background(), db.st, db.env, &a, status); err != nil {
		t.Fatalf("record attempt: %v", err)
	}
}

func conflictCode(err error) string {
	var ce *apperr.ConflictError
	if errors.As(err, &ce) {
		return ce.Code
	}
	var ie *apperr.InvalidError
	if errors.As(err, &ie) {
		return fmt.Sprintf("invalid %s %s", ie.Code, ie.Param)
	}
	return fmt.Sprint(err)
}

package activities_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A 410 Gone on the first of three attempts ends the delivery failed with error gone at
// once (not retried); the workflow's MarkDeliveryFailed then disables the endpoint (gone)
// and announces it once, however often it runs; the other endpoint is untouched
// (CONTRACT §23).
func TestGoneEndsTheDeliveryAndDisablesTheEndpoint(t *testing.T) {
	f := newTwoEndpoints(t)
	ctx := context.Background()
	f.rcs[0].SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })

	err := f.deliverOne(0)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != activities.ErrTypeGone {
		t.Fatalf("deliver: %v, want a non-retryable %s", err, activities.ErrTypeGone)
	}
	d := f.delivery(t, 0)
	as := f.attempts(t, f.ev)
	if d.Status != models.EventFailed || d.LastError != models.DeliveryGone || len(as) != 1 ||
		as[0].Outcome != models.AttemptFailed || as[0].Error != models.DeliveryGone || as[0].StatusCode != http.StatusGone {
		t.Fatalf("delivery %s (%q), attempts %+v: want failed with gone after one attempt", d.Status, d.LastError, as)
	}

	for range 2 { // the workflow's settle, then a retry of it
		if _, err := f.run(f.acts.MarkDeliveryFailed, activities.MarkFailedInput{EventID: f.ev.ID, DeliveryID: d.ID}); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := f.db.Store.WebhookEndpointByID(ctx, f.db.Env, f.eps[0].ID)
	if err != nil || gone.Enabled || gone.DisabledReason != models.DisabledGone || gone.FailingSince == nil {
		t.Fatalf("endpoint after 410: enabled=%v reason=%q since=%v (%v), want disabled gone", gone.Enabled, gone.DisabledReason, gone.FailingSince, err)
	}
	if other, _ := f.db.Store.WebhookEndpointByID(ctx, f.db.Env, f.eps[1].ID); !other.Enabled {
		t.Fatalf("the other endpoint was disabled too (%q)", other.DisabledReason)
	}
	notices, _, err := f.db.Store.Events(ctx, f.db.Env, store.EventFilter{Type: "endpoint-disabled"}, store.Page{Limit: 10})
	if err != nil || len(notices) != 1 || notices[0].ObjectID != gone.ID {
		t.Fatalf("endpoint-disabled events: %+v (%v), want one for the endpoint", notices, err)
	}
}

package activities_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
)

// twoEndpoints is a database with two endpoints, each with its receiver and secret, and
// one event with a delivery to each.
type twoEndpoints struct {
	*fixture
	eps     [2]models.WebhookEndpoint
	rcs     [2]*webhooktest.Receiver
	secrets [2]string
	ev      models.Event
	ds      map[string]models.WebhookDelivery // by endpoint id
}

func newTwoEndpoints(t *testing.T) *twoEndpoints {
	t.Helper()
	f := &twoEndpoints{fixture: newFixture(t), ds: map[string]models.WebhookDelivery{}}
	ctx := context.Background()
	for i := range f.eps {
		f.rcs[i] = webhooktest.NewReceiver(t)
		f.secrets[i], _ = signing.NewSecret()
		ep, err := webhook.CreateEndpoint(ctx, f.db.Store, f.db.Env, models.WebhookEndpoint{
			URL: f.rcs[i].URL + "/hooks", Method: "POST", Enabled: true, Secret: f.secrets[i],
			RetryPolicy: models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 2, MaximumIntervalMS: 4000, MaximumAttempts: 3 + i},
		}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			t.Fatal(err)
		}
		f.eps[i] = ep
	}
	f.ev = f.db.Event(t, "deal-signed", map[string]any{"id": "d1", "status": "signed"}, time.Time{})
	ds, err := f.db.Store.EventDeliveries(ctx, f.db.Env, f.ev.ID)
	if err != nil || len(ds) != 2 {
		t.Fatalf("deliveries %v (err %v), want 2", ds, err)
	}
	for _, d := range ds {
		f.ds[d.EndpointID] = d
	}
	return f
}

// deliverOne runs one attempt of endpoint i's delivery, as Temporal would.
func (f *twoEndpoints) deliverOne(i int) error {
	_, err := f.run(f.acts.DeliverWebhook, activities.DeliverInput{
		EventID: f.ev.ID, DeliveryID: f.ds[f.eps[i].ID].ID, Trigger: models.TriggerScheduled, MaxAttempts: 3,
	})
	return err
}

// pending is what PendingDeliveries hands the workflow for the event.
func (f *twoEndpoints) pending(t *testing.T) []models.PendingDelivery {
	t.Helper()
	val, err := f.run(f.acts.PendingDeliveries, activities.PendingInput{EventID: f.ev.ID})
	if err != nil {
		t.Fatal(err)
	}
	var got []models.PendingDelivery
	if err := val.Get(&got); err != nil {
		t.Fatal(err)
	}
	return got
}

func (f *twoEndpoints) delivery(t *testing.T, i int) models.WebhookDelivery {
	t.Helper()
	ds, err := f.db.Store.EventDeliveries(context.Background(), f.db.Env, f.ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.EndpointID == f.eps[i].ID {
			return d
		}
	}
	t.Fatalf("no delivery to endpoint %d", i)
	return models.WebhookDelivery{}
}

// An attempt of one delivery (CONTRACT §13) goes to that delivery's endpoint only, signed
// with that endpoint's secret, and is recorded on that delivery.
func TestDeliverOneDeliverySignsWithItsEndpointsSecret(t *testing.T) {
	f := newTwoEndpoints(t)
	if err := f.deliverOne(1); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	if n := len(f.rcs[0].Received()); n != 0 {
		t.Errorf("the other endpoint got %d requests", n)
	}
	got := f.rcs[1].Received()
	if len(got) != 1 {
		t.Fatalf("endpoint got %d requests, want 1", len(got))
	}
	if verifyStandardWebhooks(t, f.secrets[1], got[0].Header, got[0].Body) != 1 || verifyStandardWebhooks(t, f.secrets[0], got[0].Header, got[0].Body) != 0 {
		t.Errorf("signature %q: want one by its endpoint's secret, none by the other's", got[0].Header.Get("webhook-signature"))
	}
	as := f.attempts(t, f.ev)
	if len(as) != 1 || as[0].DeliveryID != f.ds[f.eps[1].ID].ID || as[0].EndpointID != f.eps[1].ID || as[0].Outcome != models.AttemptSucceeded {
		t.Fatalf("attempts %+v, want one succeeded on endpoint 1's delivery", as)
	}
	if d0, d1 := f.delivery(t, 0), f.delivery(t, 1); d0.Status != models.EventPending || d1.Status != models.EventDelivered {
		t.Errorf("deliveries %s and %s, want pending and delivered", d0.Status, d1.Status)
	}
	if st := f.db.Load(t, f.ev.ID).Status; st != models.EventPending {
		t.Errorf("event %s, want pending while a delivery is", st)
	}
}

// What an attempt does when its delivery or endpoint changed since the run started.
func TestDeliverOneDeliveryNotSent(t *testing.T) {
	off := false
	tests := []struct {
		name     string
		prepare  func(t *testing.T, f *twoEndpoints)
		errType  string // "" : no error
		status   string // the delivery's afterwards
		attempts int    // recorded
	}{
		{"already delivered (a completion lost): not sent again", func(t *testing.T, f *twoEndpoints) {
			if err := f.db.Store.SetEventStatus(context.Background(), f.db.Env, f.ev.ID, models.EventDelivered); err != nil {
				t.Fatal(err)
			}
		}, "", models.EventDelivered, 0},
		{"endpoint deleted: not sent, nothing recorded (its deletion's job ends it skipped)", func(t *testing.T, f *twoEndpoints) {
			if _, err := webhook.DeleteEndpoint(context.Background(), f.db.Store, f.db.Env, f.eps[0].ID, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
				t.Fatal(err)
			}
		}, "", models.EventPending, 0},
		{"delivery skipped by its endpoint's deletion: not sent", func(t *testing.T, f *twoEndpoints) {
			if _, err := webhook.DeleteEndpoint(context.Background(), f.db.Store, f.db.Env, f.eps[0].ID, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
				t.Fatal(err)
			}
			if _, err := webhook.SkipDeletedEndpointPage(context.Background(), f.db.Store, f.db.Env.ID, f.eps[0].ID, webhook.DeletionRows); err != nil {
				t.Fatal(err)
			}
		}, "", models.EventSkipped, 0},
		{"endpoint disabled: failed with endpoint_disabled, not sent, not retried", func(t *testing.T, f *twoEndpoints) {
			if _, err := webhook.UpdateEndpoint(context.Background(), f.db.Store, f.db.Env, f.eps[0].ID, webhook.EndpointPatch{Enabled: &off}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
				t.Fatal(err)
			}
		}, activities.ErrTypeEndpointDisabled, models.EventFailed, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTwoEndpoints(t)
			tt.prepare(t, f)
			err := f.deliverOne(0)
			var appErr *temporal.ApplicationError
			switch {
			case tt.errType == "" && err != nil:
				t.Fatalf("deliver: %v", err)
			case tt.errType != "" && (!errors.As(err, &appErr) || appErr.Type() != tt.errType || !appErr.NonRetryable()):
				t.Fatalf("deliver: %v, want a non-retryable %s", err, tt.errType)
			}
			if n := len(f.rcs[0].Received()); n != 0 {
				t.Errorf("endpoint got %d requests, want none", n)
			}
			d := f.delivery(t, 0)
			as := f.attempts(t, f.ev)
			if d.Status != tt.status || len(as) != tt.attempts {
				t.Fatalf("delivery %s with %d attempts, want %s with %d", d.Status, len(as), tt.status, tt.attempts)
			}
			if tt.attempts > 0 && (as[0].Outcome != models.AttemptSkipped || as[0].Error != models.DeliveryEndpointDisabled || d.LastError != models.DeliveryEndpointDisabled) {
				t.Errorf("attempt %+v, delivery error %q: want not sent, endpoint_disabled", as[0], d.LastError)
			}
		})
	}
}

// PendingDeliveries hands the workflow each pending delivery with the policy it copied.
func TestPendingDeliveries(t *testing.T) {
	f := newTwoEndpoints(t)
	if err := f.deliverOne(0); err != nil {
		t.Fatal(err)
	}
	got := f.pending(t)
	want := models.PendingDelivery{ID: f.ds[f.eps[1].ID].ID, EndpointID: f.eps[1].ID, Policy: f.eps[1].RetryPolicy}
	if len(got) != 1 || got[0].Replays == nil || *got[0].Replays != 0 {
		t.Fatalf("pending %+v, want only %+v with replays 0", got, want)
	}
	if got[0].Replays = nil; got[0] != want {
		t.Fatalf("pending %+v, want only %+v", got, want)
	}
}

// A series' MarkDeliveryFailed carries the replay count PendingDeliveries read: a delivery
// replayed since stays pending for its new series; without a count (a run of an earlier
// release) it ends failed, as before.
func TestMarkDeliveryFailedKeepsALaterReplay(t *testing.T) {
	f := newTwoEndpoints(t)
	ctx := context.Background()
	d := f.ds[f.eps[0].ID]
	pendingReplays := func() int {
		t.Helper()
		got := f.pending(t)
		for _, p := range got {
			if p.ID == d.ID && p.Replays != nil {
				return *p.Replays
			}
		}
		t.Fatalf("delivery %s not pending with a count: %+v", d.ID, got)
		return 0
	}
	mark := func(replays *int) string {
		t.Helper()
		if _, err := f.run(f.acts.MarkDeliveryFailed, activities.MarkFailedInput{EventID: f.ev.ID, DeliveryID: d.ID, Replays: replays}); err != nil {
			t.Fatal(err)
		}
		return f.delivery(t, 0).Status
	}

	first := pendingReplays()
	if got := mark(&first); got != models.EventFailed {
		t.Fatalf("no replay since the read: %q, want failed", got)
	}
	if _, err := replay.Deliveries(ctx, f.db.Store, f.db.Env, f.ev.ID, f.eps[0].ID); err != nil {
		t.Fatal(err)
	}
	if again := pendingReplays(); again != first+1 {
		t.Fatalf("replays after a replay: %d, want %d", again, first+1)
	}
	if got := mark(&first); got != models.EventPending {
		t.Fatalf("settled by the series before the replay: %q, want pending", got)
	}
	if got := mark(nil); got != models.EventFailed {
		t.Fatalf("no count: %q, want failed", got)
	}
}

package store_test

import (
	"context"
	"errors"
	"sync"
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

// The event's status is the summary of its deliveries (CONTRACT §13), in Go and in SQL.
func TestSummarizeDeliveries(t *testing.T) {
	const (
		P, R, D, F, S = models.EventPending, models.EventRetrying, models.EventDelivered, models.EventFailed, models.EventSkipped
	)
	cases := []struct {
		name     string
		statuses []string
		want     string
	}{
		{"no delivery", nil, S},
		{"all skipped", []string{S, S}, S},
		{"one delivered", []string{D}, D},
		{"delivered and skipped", []string{S, D}, D},
		{"pending beats delivered", []string{D, P, S}, P},
		{"retrying beats pending", []string{P, R, D}, R},
		{"failed beats everything", []string{D, R, P, F, S}, F},
		{"failed and delivered", []string{F, D}, F},
		{"one pending", []string{P}, P},
	}
	for _, tc := range cases {
		if got := store.SummarizeDeliveries(tc.statuses); got != tc.want {
			t.Errorf("%s: Go summary %q, want %q", tc.name, got, tc.want)
		}
	}
	for name, db := range bothDatabases(t, models.EnvLive) {
		ctx := context.Background()
		for _, tc := range cases {
			ev := newAccountEvent(t, db) // no endpoint yet: skipped, no delivery
			for _, st := range tc.statuses {
				insertDelivery(t, db, ev.ID, uuid.NewString(), st)
			}
			if err := db.st.SummarizeEventForTest(ctx, ev.ID); err != nil {
				t.Fatal(err)
			}
			if got := eventStatus(t, db, ev.ID); got != tc.want {
				t.Errorf("%s %s: SQL summary %q, want %q", name, tc.name, got, tc.want)
			}
		}
	}
}

// The change's transaction gives its event one delivery per enabled endpoint subscribed to
// its type, with a copy of the endpoint's retry policy; "*" never matches the operational
// endpoint-disabled; an event nobody takes is skipped at once.
func TestOutboxCreatesDeliveries(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		if ev := newAccountEvent(t, db); ev.Status != models.EventSkipped || eventStatus(t, db, ev.ID) != models.EventSkipped {
			t.Fatalf("event without endpoints: %q, want skipped", ev.Status)
		}
		all := newEndpoint(t, db, "https://all.example/h", nil, true)
		accounts := newEndpoint(t, db, "https://crm.example/h", []string{"account-created", "account-updated"}, true)
		newEndpoint(t, db, "https://billing.example/h", []string{"deal-signed"}, true)
		newEndpoint(t, db, "https://off.example/h", nil, false)
		newEndpoint(t, db, "https://ops.example/h", []string{"endpoint-disabled"}, true)
		policy := models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 2, MaximumIntervalMS: 8000, MaximumAttempts: 3}
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, accounts.ID, webhook.EndpointPatch{RetryPolicy: &policy}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}

		ev := newAccountEvent(t, db)
		got := deliveriesByEndpoint(t, db, ev.ID)
		if len(got) != 2 || got[all.ID].Status != models.EventPending || got[accounts.ID].Status != models.EventPending {
			t.Fatalf("deliveries %+v, want pending ones to the * and the account endpoints only", got)
		}
		if got[all.ID].RetryPolicy != models.DefaultRetryPolicy || got[accounts.ID].RetryPolicy != policy {
			t.Fatalf("policies %+v / %+v, want the default and the endpoint's", got[all.ID].RetryPolicy, got[accounts.ID].RetryPolicy)
		}
		if ev.Status != models.EventPending || eventStatus(t, db, ev.ID) != models.EventPending {
			t.Fatalf("event status %q, want pending", ev.Status)
		}
		// Later edits of the endpoint leave the copy alone.
		other := models.RetryPolicy{InitialIntervalMS: 5000, BackoffCoefficient: 1, MaximumIntervalMS: 5000, MaximumAttempts: 2}
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, accounts.ID, webhook.EndpointPatch{RetryPolicy: &other}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		if d := deliveriesByEndpoint(t, db, ev.ID)[accounts.ID]; d.RetryPolicy != policy {
			t.Fatalf("delivery policy changed with the endpoint: %+v", d.RetryPolicy)
		}
		pending, err := db.st.PendingDeliveries(ctx, ev.ID)
		if err != nil || len(pending) != 2 {
			t.Fatalf("PendingDeliveries: %v %v", pending, err)
		}
		target, err := db.st.DeliveryForAttempt(ctx, got[all.ID].ID)
		if err != nil || target.Endpoint == nil || target.Endpoint.ID != all.ID || target.Event.ID != ev.ID || target.Env.ID != db.env.ID {
			t.Fatalf("DeliveryForAttempt: %+v %v", target, err)
		}
	})
}

// Twenty concurrent creates leave exactly 16 endpoints; the others are refused with
// too_many_endpoints.
func TestEndpointLimitUnderConcurrentCreates(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := webhook.CreateEndpoint(ctx, db.st, db.env, models.WebhookEndpoint{
					URL: "https://a.example/", Method: "POST", Enabled: true, Secret: "whsec_x",
				}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		ok, refused := 0, 0
		for err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, webhook.ErrTooManyEndpoints):
				refused++
			default:
				t.Errorf("create: %v", err)
			}
		}
		all, err := db.st.AllWebhookEndpoints(ctx, db.env)
		if ok != webhook.MaxEndpoints || refused != 4 || err != nil || len(all) != webhook.MaxEndpoints {
			t.Fatalf("%d created, %d refused, %d stored (%v); want 16, 4, 16", ok, refused, len(all), err)
		}
	})
}

// PATCH and the singular PUT: enabling clears the reason, disabling says manual; PUT acts
// on the oldest endpoint and keeps what it does not set.
func TestEndpointUpdateAndSingularPut(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		first, created, err := putOldest(db.st, db.env, "https://one.example/", "POST", true, "whsec_one", now)
		if err != nil || !created || first.EventTypes[0] != "*" || first.RetryPolicy != models.DefaultRetryPolicy {
			t.Fatalf("first PUT: %+v %v %v", first, created, err)
		}
		second := newEndpoint(t, db, "https://two.example/", []string{"deal-signed"}, true)
		desc := "billing"
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, first.ID, webhook.EndpointPatch{Description: &desc, EventTypes: []string{"account-created"}}, now, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		ep, created, err := putOldest(db.st, db.env, "https://uno.example/", "GET", false, "whsec_new", now)
		if err != nil || created || ep.ID != first.ID || ep.Secret != "whsec_one" || ep.URL != "https://uno.example/" ||
			ep.Method != "GET" || ep.Enabled || ep.DisabledReason != models.DisabledManual || ep.Description != "billing" ||
			len(ep.EventTypes) != 1 || ep.EventTypes[0] != "account-created" {
			t.Fatalf("second PUT: %+v created=%v %v", ep, created, err)
		}
		if got, _ := db.st.WebhookEndpoint(ctx, db.env); got.ID != first.ID {
			t.Fatalf("singular endpoint %s, want the oldest %s", got.ID, first.ID)
		}
		on := true
		ep, err = webhook.UpdateEndpoint(ctx, db.st, db.env, first.ID, webhook.EndpointPatch{Enabled: &on}, now, idempotency.Reply[webhook.EndpointObject]{})
		if err != nil || !ep.Enabled || ep.DisabledReason != "" || ep.FailingSince != nil || ep.EnabledAt == nil {
			t.Fatalf("re-enable: %+v %v", ep, err)
		}
		rot, err := webhook.RotateSecret(ctx, db.st, db.env, second.ID, "whsec_rot", now, time.Hour, idempotency.Reply[webhook.SecretObject]{})
		if err != nil || rot.Secret != "whsec_rot" || rot.PreviousSecret != second.Secret {
			t.Fatalf("rotate: %+v %v", rot, err)
		}
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, uuid.NewString(), webhook.EndpointPatch{}, now, idempotency.Reply[webhook.EndpointObject]{}); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("patch of a missing endpoint: %v", err)
		}
		page, more, err := db.st.WebhookEndpoints(ctx, db.env, store.Page{Limit: 1})
		if err != nil || !more || len(page) != 1 || page[0].ID != second.ID {
			t.Fatalf("list: %v %v %v, want the newest first", page, more, err)
		}
	})
}

// Runs of the single-endpoint releases record attempts without a delivery id: they land
// on the event's delivery to the oldest endpoint; their MarkDeliveryFailed and replay act
// on the deliveries too.
func TestOldRunsRecordOnTheirDelivery(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		oldest := newEndpoint(t, db, "https://a.example/", nil, true)
		newEndpoint(t, db, "https://b.example/", nil, true)
		ev := newAccountEvent(t, db)
		a := models.DeliveryAttempt{ID: uuid.NewString(), EventID: ev.ID, RunID: "r1", Number: 1, Trigger: models.TriggerScheduled,
			StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 500"}
		for i := 0; i < 2; i++ { // a retried write of one attempt is recorded once
			if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &a, models.EventRetrying); err != nil {
				t.Fatal(err)
			}
		}
		d := deliveriesByEndpoint(t, db, ev.ID)[oldest.ID]
		as, _ := db.st.DeliveryAttempts(ctx, db.env, ev.ID)
		if len(as) != 1 || as[0].DeliveryID != d.ID || as[0].EndpointID != oldest.ID || d.Status != models.EventRetrying || d.LastError != "status 500" {
			t.Fatalf("attempts %+v, delivery %+v", as, d)
		}
		if err := webhook.MarkEventFailed(ctx, db.st, ev.ID); err != nil {
			t.Fatal(err)
		}
		if s := eventStatus(t, db, ev.ID); s != models.EventFailed {
			t.Fatalf("after MarkEventFailed: %q", s)
		}
		if err := db.st.MarkReplayed(ctx, db.env, ev.ID, "webhook-"+ev.ID, "r2", time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		for _, d := range deliveriesByEndpoint(t, db, ev.ID) {
			if d.Status != models.EventPending {
				t.Fatalf("after MarkReplayed: %+v", d)
			}
		}
		if s := eventStatus(t, db, ev.ID); s != models.EventPending {
			t.Fatalf("event after MarkReplayed: %q", s)
		}
	})
}

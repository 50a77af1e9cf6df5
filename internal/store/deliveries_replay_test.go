package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A replay is decided per delivery: replaying B while A retries works; replaying A, or
// every delivery, is refused while A is under way; endpoints subscribed since get one.
func TestReplayDeliveriesPerEndpoint(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/", nil, true)
		b := newEndpoint(t, db, "https://b.example/", nil, true)
		ev := newAccountEvent(t, db)
		ds := deliveriesByEndpoint(t, db, ev.ID)
		attempt(t, db, ds[a.ID], models.AttemptFailed, models.EventRetrying, time.Now().UTC())
		attempt(t, db, ds[b.ID], models.AttemptSucceeded, models.EventDelivered, time.Now().UTC())

		got, err := replay.Deliveries(ctx, db.st, db.env, ev.ID, b.ID)
		if err != nil || got.Status != models.EventRetrying || got.RedispatchAt == nil {
			t.Fatalf("replay B while A retries: %+v %v", got, err)
		}
		if d := deliveriesByEndpoint(t, db, ev.ID)[b.ID]; d.Status != models.EventPending {
			t.Fatalf("B after replay: %+v", d)
		}
		for _, endpoint := range []string{a.ID, ""} {
			_, err := replay.Deliveries(ctx, db.st, db.env, ev.ID, endpoint)
			var ce *apperr.ConflictError
			if !errors.As(err, &ce) || ce.Code != replay.CodeDeliveryInProgress || !strings.Contains(ce.Message, a.ID) && endpoint != "" {
				t.Fatalf("replay %q while in progress: %v", endpoint, err)
			}
		}
		if _, err := replay.Deliveries(ctx, db.st, db.env, ev.ID, uuid.NewString()); conflictCode(err) != "invalid parameter_invalid endpoint_id" || !errors.Is(err, replay.ErrUnknownEndpoint) {
			t.Fatalf("replay to an unknown endpoint: %v", err)
		}
		if _, err := replay.Deliveries(ctx, db.st, db.env, uuid.NewString(), ""); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("replay of an unknown event: %v", err)
		}

		// Both finished; an endpoint created since joins a replay of every delivery.
		attempt(t, db, deliveriesByEndpoint(t, db, ev.ID)[b.ID], models.AttemptSucceeded, models.EventDelivered, time.Now().UTC())
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, ds[a.ID].ID, "", nil, 0); err != nil {
			t.Fatal(err)
		}
		c := newEndpoint(t, db, "https://c.example/", []string{"account-created"}, true)
		newEndpoint(t, db, "https://d.example/", []string{"deal-signed"}, true)
		got, err = replay.Deliveries(ctx, db.st, db.env, ev.ID, "")
		if err != nil || got.Status != models.EventPending {
			t.Fatalf("replay all: %+v %v", got, err)
		}
		after := deliveriesByEndpoint(t, db, ev.ID)
		if len(after) != 3 || after[a.ID].Status != models.EventPending || after[b.ID].Status != models.EventPending || after[c.ID].Status != models.EventPending {
			t.Fatalf("deliveries after replay all: %+v", after)
		}

		due, err := db.st.EventsToRedispatch(ctx, time.Now().Add(time.Second), 10)
		if err != nil || len(due) != 1 || due[0].ID != ev.ID {
			t.Fatalf("EventsToRedispatch: %v %v", due, err)
		}
		if err := db.st.MarkRedispatched(ctx, db.env, ev.ID, *due[0].RedispatchAt, "webhook-"+ev.ID, "run-2"); err != nil {
			t.Fatal(err)
		}
		if due, _ := db.st.EventsToRedispatch(ctx, time.Now().Add(time.Second), 10); len(due) != 0 {
			t.Fatalf("still to redispatch: %v", due)
		}
	})
}

// A bulk replay walks deliveries: status and endpoint filter the delivery.
func TestDeliveriesAfterFiltersDeliveries(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/", nil, true)
		b := newEndpoint(t, db, "https://b.example/", nil, true)
		var failedA []string
		for i := 0; i < 3; i++ {
			ev := newAccountEvent(t, db)
			ds := deliveriesByEndpoint(t, db, ev.ID)
			attempt(t, db, ds[a.ID], models.AttemptFailed, models.EventFailed, time.Now().UTC())
			attempt(t, db, ds[b.ID], models.AttemptSucceeded, models.EventDelivered, time.Now().UTC())
			failedA = append(failedA, ds[a.ID].ID)
		}
		f := store.EventFilter{Status: models.EventFailed, EndpointID: a.ID}
		n, err := db.st.CountDeliveries(ctx, db.env, f)
		if err != nil || n != 3 {
			t.Fatalf("count: %d %v", n, err)
		}
		var walked []string
		var at *time.Time
		cursor := ""
		for {
			page, err := deliveriesAfter(ctx, db, f, at, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, d := range page {
				walked = append(walked, d.ID)
			}
			last := page[len(page)-1]
			at, cursor = &last.CreatedAt, last.ID
		}
		if strings.Join(walked, ",") != strings.Join(failedA, ",") {
			t.Fatalf("walked %v, want %v", walked, failedA)
		}
		if n, _ := db.st.CountDeliveries(ctx, db.env, store.EventFilter{Status: models.EventFailed, EndpointID: b.ID}); n != 0 {
			t.Fatalf("B has %d failed deliveries, want 0", n)
		}
		if n, _ := db.st.CountEvents(ctx, db.env, store.EventFilter{Status: models.EventDelivered, EndpointID: b.ID}); n != 3 {
			t.Fatalf("events delivered to B: %d, want 3 (their own status is failed)", n)
		}
	})
}

// deliveriesAfter walks one page of deliveries as a bulk replay's page does, in a
// transaction of its own.
func deliveriesAfter(ctx context.Context, db seeded, f store.EventFilter, at *time.Time, cursor string, limit int) ([]models.WebhookDelivery, error) {
	var page []models.WebhookDelivery
	_, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error {
		var err error
		page, err = tx.DeliveriesAfter(f, at, cursor, limit)
		return err
	})
	return page, err
}

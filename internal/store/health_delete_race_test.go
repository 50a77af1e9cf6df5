package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// The end of a delivery that judges its endpoint's disabling (event, then endpoint)
// beside the deletion of that endpoint (endpoint, then the events of its unfinished
// deliveries): both finish, neither is a deadlock's victim. The event is held by hand
// (a sibling's record) until both wait for it, the end first.
func TestMarkDeliveryFailedBesideEndpointDeletion(t *testing.T) {
	db, raw := postgresRaw(t, models.EnvLive)
	ctx := context.Background()
	a := newEndpoint(t, db, "https://a.example/", nil, true)
	ev := newAccountEvent(t, db)
	d := deliveriesByEndpoint(t, db, ev.ID)[a.ID]

	tx := raw.Begin()
	if err := tx.Exec(`SELECT id FROM events WHERE id = ? FOR UPDATE`, ev.ID).Error; err != nil {
		t.Fatal(err)
	}
	marked := make(chan error, 1)
	go func() {
		_, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", nil, time.Hour)
		marked <- err
	}()
	waitForLockWaiters(t, raw, 1)
	deleted := make(chan error, 1)
	go func() {
		_, err := webhook.DeleteEndpoint(ctx, db.st, db.env, a.ID, idempotency.Reply[webhook.DeletedEndpoint]{})
		deleted <- err
	}()
	waitForLockWaiters(t, raw, 2)
	tx.Rollback()
	if err := <-marked; err != nil {
		t.Errorf("mark delivery failed: %v", err)
	}
	if err := <-deleted; err != nil {
		t.Errorf("delete endpoint: %v", err)
	}
}

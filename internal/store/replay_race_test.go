package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/models"
)

// A replay's new run may record its first attempt while the starter marks the event
// replayed. When the attempt's transaction holds the event row as MarkReplayed arrives,
// MarkReplayed must still see that attempt once it commits, and keep its status instead
// of putting the event back to pending for good (PostgreSQL, READ COMMITTED).
func TestMarkReplayedAfterAConcurrentAttemptKeepsItsStatus(t *testing.T) {
	db, raw := postgresRaw(t, models.EnvSandbox)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	ev := models.Event{ID: uuid.NewString(), OrganizationID: db.env.OrganizationID, EnvironmentID: db.env.ID,
		Environment: db.env.Name, Type: "deal-signed", ObjectType: "deal", ObjectID: uuid.NewString(), Time: "1",
		Payload: "{}", Status: models.EventFailed, Seq: 1, RunID: "run-1", CreatedAt: now, UpdatedAt: now}
	if err := raw.Create(&ev).Error; err != nil {
		t.Fatal(err)
	}

	// The new run's attempt, recorded as the activity does: attempt and status in one
	// transaction, which holds the event row until it commits.
	tx := raw.Begin()
	att := models.DeliveryAttempt{ID: uuid.NewString(), EventID: ev.ID, EnvironmentID: db.env.ID, RunID: "run-2", Number: 1,
		Trigger: models.TriggerManual, StartedAt: now, Outcome: models.AttemptSucceeded, CreatedAt: now}
	if err := tx.Create(&att).Error; err != nil {
		t.Fatal(err)
	}
	if err := tx.Model(&models.Event{}).Where("id = ?", ev.ID).Update("status", models.EventDelivered).Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.st.MarkReplayed(ctx, db.env, ev.ID, "webhook-"+ev.ID, "run-2", now) }()
	waitForLockWaiters(t, raw, 1)
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var got models.Event
	if err := raw.Where("id = ?", ev.ID).Take(&got).Error; err != nil {
		t.Fatal(err)
	}
	if got.Status != models.EventDelivered || got.RunID != "run-2" {
		t.Fatalf("event %s in run %s after the replay was marked, want delivered in run-2", got.Status, got.RunID)
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// The settling of a series (MarkDeliveryFailed) that read the delivery before a replay
// leaves the replayed delivery pending for its new series; without a replay since, or
// from a run that sent no count (an earlier release), it ends the delivery failed.
func TestMarkDeliveryFailedLeavesAReplayPending(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		ep := newEndpoint(t, db, "https://a.example/", nil, true)
		count := func(n int) *int { return &n }
		delivery := func(eventID string) models.WebhookDelivery {
			t.Helper()
			return deliveriesByEndpoint(t, db, eventID)[ep.ID]
		}

		// The series read replays 0; its last attempt ended the delivery failed, a
		// replay put it back to pending, then the series' settling ran (its worker
		// killed, retried).
		ev := newAccountEvent(t, db)
		d := delivery(ev.ID)
		if d.Replays != 0 {
			t.Fatalf("new delivery: replays %d, want 0", d.Replays)
		}
		attempt(t, db, d, models.AttemptFailed, models.EventFailed, time.Now().UTC())
		if _, err := replay.Deliveries(ctx, db.st, db.env, ev.ID, ""); err != nil {
			t.Fatal(err)
		}
		if d := delivery(ev.ID); d.Status != models.EventPending || d.Replays != 1 {
			t.Fatalf("after replay: status %q, replays %d; want pending, 1", d.Status, d.Replays)
		}
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", count(0), 0); err != nil {
			t.Fatal(err)
		}
		if d := delivery(ev.ID); d.Status != models.EventPending {
			t.Fatalf("settled by the series before the replay: %q, want pending", d.Status)
		}
		if s := eventStatus(t, db, ev.ID); s != models.EventPending {
			t.Fatalf("event: %q, want pending", s)
		}

		// The replay's own series (replays 1) fails and is settled: failed.
		attempt(t, db, delivery(ev.ID), models.AttemptFailed, models.EventRetrying, time.Now().UTC())
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", count(1), 0); err != nil {
			t.Fatal(err)
		}
		if d := delivery(ev.ID); d.Status != models.EventFailed {
			t.Fatalf("settled by the replay's series: %q, want failed", d.Status)
		}

		// No replay since the series began (its last record failed: still retrying).
		ev2 := newAccountEvent(t, db)
		attempt(t, db, delivery(ev2.ID), models.AttemptFailed, models.EventRetrying, time.Now().UTC())
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, delivery(ev2.ID).ID, "", count(0), 0); err != nil {
			t.Fatal(err)
		}
		if d := delivery(ev2.ID); d.Status != models.EventFailed {
			t.Fatalf("no replay: %q, want failed", d.Status)
		}

		// A run of an earlier release sends no count: failed, as before.
		attempt(t, db, delivery(ev2.ID), models.AttemptFailed, models.EventFailed, time.Now().UTC())
		if _, err := replay.Deliveries(ctx, db.st, db.env, ev2.ID, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, delivery(ev2.ID).ID, "", nil, 0); err != nil {
			t.Fatal(err)
		}
		if d := delivery(ev2.ID); d.Status != models.EventFailed || d.Replays != 1 {
			t.Fatalf("no count: status %q, replays %d; want failed, 1", d.Status, d.Replays)
		}
	})
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// TestOutboxBacklogAge: 0 with no waiting event, the oldest waiting event's age while
// some wait, 0 again once all are dispatched; on PostgreSQL and SQLite.
func TestOutboxBacklogAge(t *testing.T) {
	forBoth(t, "live", func(t *testing.T, ctx context.Context, db seeded) {
		st, env := db.st, db.env
		var events []models.Event
		for _, id := range []string{"acct-1", "acct-2"} {
			_, evs, err := insertAccount(ctx, st, env, models.Account{ID: id, Name: id, Status: "draft", Properties: "{}"},
				emitOf("account-created"))
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, evs...)
		}
		// Dated back rather than waited for: the first event ten minutes ago, the second
		// five (microseconds, which both databases keep exactly).
		now := time.Now().UTC().Truncate(time.Microsecond)
		created := []time.Time{now.Add(-10 * time.Minute), now.Add(-5 * time.Minute)}
		for i, at := range created {
			if err := st.ExecForTest(ctx, `UPDATE events SET created_at = ? WHERE id = ?`, at, events[i].ID); err != nil {
				t.Fatal(err)
			}
		}
		// Both wait: the age is the first's.
		expectAgeOf(t, st, created[0])
		if err := st.MarkDispatched(ctx, env, events[0].ID, "webhook-"+events[0].ID, "run", time.Now()); err != nil {
			t.Fatal(err)
		}
		// Now the second event is the oldest waiting.
		expectAgeOf(t, st, created[1])
		if err := st.MarkDispatched(ctx, env, events[1].ID, "webhook-"+events[1].ID, "run", time.Now()); err != nil {
			t.Fatal(err)
		}
		expectAge(t, st, 0, 0)
	})
}

// expectAgeOf expects the backlog age to be that of an event created at: its age when
// asked, no less than before the question and no more than after it.
func expectAgeOf(t *testing.T, st *store.Store, at time.Time) {
	t.Helper()
	lo := time.Since(at)
	got, err := st.OutboxBacklogAge(context.Background())
	hi := time.Since(at)
	if err != nil {
		t.Fatal(err)
	}
	if got < lo || got > hi {
		t.Fatalf("backlog age %v, want the age of the event created at %v (%v to %v)", got, at, lo, hi)
	}
}

func expectAge(t *testing.T, st *store.Store, lo, hi time.Duration) time.Duration {
	t.Helper()
	got, err := st.OutboxBacklogAge(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got < lo || got > hi {
		t.Fatalf("backlog age %v, want between %v and %v", got, lo, hi)
	}
	return got
}

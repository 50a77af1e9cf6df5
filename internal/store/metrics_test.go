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
	ctx := context.Background()
	for name, db := range bothDatabases(t, "live") {
		t.Run(name, func(t *testing.T) {
			st, env := db.st, db.env
			var events []models.Event
			for _, id := range []string{"acct-1", "acct-2"} {
				_, evs, err := insertAccount(ctx, st, env, models.Account{ID: id, Name: id, Status: "draft", Properties: "{}"},
					func(a models.Account) []store.Emit {
						return []store.Emit{{Type: "account-created", ObjectType: "account", ObjectID: a.ID, Object: map[string]string{"id": a.ID}}}
					})
				if err != nil {
					t.Fatal(err)
				}
				events = append(events, evs...)
				time.Sleep(300 * time.Millisecond)
			}
			// The first event has waited ≥ 600 ms, the second ≥ 300 ms: the age is the first's.
			expectAge(t, st, 600*time.Millisecond, 10*time.Second)
			if err := st.MarkDispatched(ctx, env, events[0].ID, "webhook-"+events[0].ID, "run", time.Now()); err != nil {
				t.Fatal(err)
			}
			// Now the second event is the oldest waiting, created ≥ 300 ms after the first.
			got := expectAge(t, st, 300*time.Millisecond, 10*time.Second)
			if bound := time.Since(events[0].CreatedAt) - 300*time.Millisecond; got > bound {
				t.Fatalf("backlog age %v is not the second event's (≤ %v)", got, bound)
			}
			if err := st.MarkDispatched(ctx, env, events[1].ID, "webhook-"+events[1].ID, "run", time.Now()); err != nil {
				t.Fatal(err)
			}
			expectAge(t, st, 0, 0)
		})
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

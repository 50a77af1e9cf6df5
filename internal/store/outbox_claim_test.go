package store_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A claim takes events owed a start round robin by environment, each with the fanout
// its change wrote, locks them from every other claim, and marks dispatched, in its own
// transaction, exactly those its starter started (CONTRACT §22); the rest stay owed.
func TestClaimStarts(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		if !db.st.ClaimsStarts() {
			_, err := db.st.ClaimStarts(ctx, store.StartQuery{Envs: 16, Limit: 64}, nil)
			if !errors.Is(err, store.ErrClaimsUnsupported) {
				t.Fatalf("SQLite claim: %v, want ErrClaimsUnsupported", err)
			}
			return
		}
		live, err := db.st.Environment(ctx, db.env.OrganizationID, models.EnvLive)
		if err != nil {
			t.Fatal(err)
		}
		other := seeded{st: db.st, env: live, url: db.url}
		newEndpoint(t, db, "https://a.example.com/hook", []string{"*"}, true)
		var sandbox, liveEvs []models.Event
		for range 5 {
			sandbox = append(sandbox, newAccountEvent(t, db))
		}
		for range 2 {
			liveEvs = append(liveEvs, newAccountEvent(t, other))
		}
		wrote := map[string]*models.Fanout{}
		for _, e := range append(slices.Clone(sandbox), liveEvs...) {
			wrote[e.ID] = e.Fanout
		}

		var inner store.StartClaim
		claim, err := db.st.ClaimStarts(ctx, store.StartQuery{Envs: 16, Limit: 4}, func(ctx context.Context, evs []models.Event) []store.Started {
			// The runs it starts record their first attempt meanwhile, which locks the
			// event row: a claim holds no row lock they would wait for.
			if err := db.st.ExecForTest(ctx, "SELECT id FROM events WHERE id = ? FOR UPDATE NOWAIT", evs[0].ID); err != nil {
				t.Errorf("a claimed event's row is locked while the claim is open: %v", err)
			}
			// Another claimer meanwhile gets the others, never these.
			var err error
			inner, err = db.st.ClaimStarts(ctx, store.StartQuery{Envs: 16, Limit: 64}, func(context.Context, []models.Event) []store.Started { return nil })
			if err != nil {
				t.Error(err)
			}
			return []store.Started{{EventID: evs[0].ID, WorkflowID: "delivery-" + evs[0].ID, RunID: "run-1"}}
		})
		if err != nil {
			t.Fatal(err)
		}
		// Two environments share the claim of 4: each one's two oldest.
		want := []string{sandbox[0].ID, sandbox[1].ID, liveEvs[0].ID, liveEvs[1].ID}
		if got := ids(claim.Events); !sameSet(got, want) {
			t.Fatalf("claimed %v, want %v", got, want)
		}
		for _, e := range claim.Events {
			if !reflect.DeepEqual(fanoutIDs(e.Fanout), fanoutIDs(wrote[e.ID])) {
				t.Errorf("event %s claimed with fanout %v, its change wrote %v", e.ID, fanoutIDs(e.Fanout), fanoutIDs(wrote[e.ID]))
			}
		}
		if got := ids(inner.Events); !sameSet(got, ids(sandbox[2:])) {
			t.Errorf("the concurrent claim took %v, want the unlocked %v", got, ids(sandbox[2:]))
		}
		// The first claim cut the sandbox short (2 of its 5): more may be waiting; the
		// second took all it could see.
		if !claim.More || inner.More {
			t.Errorf("More = %v, %v; want true (a full share), false (nothing left)", claim.More, inner.More)
		}
		// Only what the starter started is dispatched.
		var dispatched []models.Event
		if err := db.st.ScanForTest(ctx, &dispatched, "SELECT * FROM events WHERE dispatched_at IS NOT NULL"); err != nil {
			t.Fatal(err)
		}
		if len(dispatched) != 1 || dispatched[0].ID != claim.Events[0].ID || dispatched[0].RunID != "run-1" || dispatched[0].WorkflowID != "delivery-"+claim.Events[0].ID {
			t.Fatalf("dispatched %+v, want only %s with its run", dispatched, claim.Events[0].ID)
		}
		// One environment a turn: each turn goes on after the one the last ended with,
		// and round to the first past the last.
		none := func(context.Context, []models.Event) []store.Started { return nil }
		var served []string
		after := ""
		for range 3 {
			c, err := db.st.ClaimStarts(ctx, store.StartQuery{After: after, Envs: 1, Limit: 64}, none)
			if err != nil {
				t.Fatal(err)
			}
			if !c.More || len(c.Events) == 0 {
				t.Fatalf("turn after %q: %d events, more %v, with events waiting", after, len(c.Events), c.More)
			}
			served = append(served, c.Events[0].EnvironmentID)
			after = c.Next
		}
		if served[0] == served[1] || served[2] != served[0] {
			t.Errorf("environments served in turn: %v, want A B A", served)
		}
	})
}

func ids(evs []models.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func fanoutIDs(f *models.Fanout) [][2]string {
	if f == nil {
		return nil
	}
	var out [][2]string
	for i, d := range f.Deliveries {
		out = append(out, [2]string{d.ID, f.Destinations[i].URL})
	}
	return out
}

package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// PendingStarts is what the start queue reads back of an environment's overflow
// (CONTRACT §17): its events without a workflow, oldest first, whatever their age, then
// those replayed and not reached yet; never another environment's.
func TestPendingStarts(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		live, err := db.st.Environment(ctx, db.env.OrganizationID, models.EnvLive)
		if err != nil {
			t.Fatal(err)
		}
		var evs []models.Event
		for range 4 {
			evs = append(evs, newAccountEvent(t, db))
		}
		newAccountEvent(t, seeded{st: db.st, env: live, url: db.url}) // another environment's
		for _, e := range evs[:2] {
			if err := db.st.MarkDispatched(ctx, db.env, e.ID, "webhook-"+e.ID, "run", time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.st.ExecForTest(ctx, "UPDATE events SET redispatch_at = ? WHERE id = ?", time.Now().UTC(), evs[0].ID); err != nil {
			t.Fatal(err)
		}
		for limit, want := range map[int][]string{
			10: {evs[2].ID, evs[3].ID, evs[0].ID},
			2:  {evs[2].ID, evs[3].ID},
			1:  {evs[2].ID},
		} {
			got, err := db.st.PendingStarts(ctx, db.env, limit)
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, e := range got {
				gotIDs = append(gotIDs, e.ID)
			}
			if !slices.Equal(gotIDs, want) {
				t.Errorf("limit %d: %v, want %v", limit, gotIDs, want)
			}
		}
		if got, _ := db.st.PendingStarts(ctx, db.env, 10); got[2].RedispatchAt == nil {
			t.Error("a replayed event comes back without its redispatch mark")
		}
	})
}

package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// replayedBody answers a single-event replay as the API would, from what the replay's
// transaction read back: the event's status and its deliveries'.
func replayedBody(r events.Object) ([]byte, error) {
	body := fmt.Sprintf("%s %s", r.ID, r.Status)
	for _, d := range r.Deliveries {
		body += fmt.Sprintf(" %s:%s", d.EndpointID, d.Status)
	}
	return []byte(body), nil
}

// claimReplayKey claims key for POST /v1/events/{id}/replay.
func claimReplayKey(t *testing.T, db seeded, key, eventID string) store.Claim {
	t.Helper()
	c, err := db.st.ClaimIdempotencyKey(context.Background(), db.env,
		store.IdempotentRequest{Key: key, Method: "POST", Path: "/v1/events/" + eventID + "/replay", Fingerprint: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A single-event replay keeps its idempotent answer in the replay's own transaction
// (CONTRACT §14, §21): when keeping it fails (the claim lost, a render that fails) the
// replay is rolled back — the delivery still failed, never replayed, the event not
// marked for redispatch; when it commits, a retry with the same key finds the answer,
// made from the deliveries as the replay left them, and nothing is replayed twice.
func TestReplayEventKeepsItsAnswerInItsTransaction(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
		ev := failedEvents(t, db, 1)[0]
		unchanged := func(what string) {
			t.Helper()
			d := deliveriesByEndpoint(t, db, ev.ID)[a.ID]
			got, _, err := db.st.EventByID(ctx, ev.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != models.EventFailed || d.Replays != 0 || got.RedispatchAt != nil {
				t.Fatalf("after %s: delivery %s replayed %d times, event redispatch %v; want the replay rolled back",
					what, d.Status, d.Replays, got.RedispatchAt)
			}
		}

		lost := claimReplayKey(t, db, "lost", ev.ID)
		if err := db.st.ReleaseIdempotencyKey(ctx, lost.Answer); err != nil {
			t.Fatal(err)
		}
		_, err := replay.Event(ctx, db.st, db.env, ev.ID, "", events.Links{}, newReply(lost.Answer, 202, replayedBody))
		if !errors.Is(err, store.ErrIdempotencyClaimLost) {
			t.Fatalf("replay with its claim lost: %v, want %v", err, store.ErrIdempotencyClaimLost)
		}
		unchanged("a lost claim")

		broken := claimReplayKey(t, db, "broken", ev.ID)
		boom := func(events.Object) ([]byte, error) { return nil, errors.New("boom") }
		if _, err := replay.Event(ctx, db.st, db.env, ev.ID, "", events.Links{}, newReply(broken.Answer, 202, boom)); err == nil {
			t.Fatal("a failed render did not fail the replay")
		}
		unchanged("a failed render")

		ok := claimReplayKey(t, db, "ok", ev.ID)
		r, err := replay.Event(ctx, db.st, db.env, ev.ID, a.ID, events.Links{}, newReply(ok.Answer, 202, replayedBody))
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s %s %s:%s", ev.ID, models.EventPending, a.ID, models.EventPending)
		if r.Event.RedispatchAt == nil || len(r.Deliveries) != 1 {
			t.Fatalf("replayed = %+v, want the event marked for redispatch with its delivery", r)
		}
		if status, body, kept := ok.Answer.Kept(); !kept || status != 202 || string(body) != want {
			t.Fatalf("kept %v %d %q, want 202 %q", kept, status, body, want)
		}
		again := claimReplayKey(t, db, "ok", ev.ID)
		if again.Outcome != store.ClaimReplay || again.Status != 202 || string(again.Body) != want {
			t.Fatalf("retry with the same key = %+v, want the kept answer", again)
		}
		if d := deliveriesByEndpoint(t, db, ev.ID)[a.ID]; d.Replays != 1 {
			t.Fatalf("delivery replayed %d times, want 1", d.Replays)
		}
	})
}

package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/domain/deals"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Sequence = commit order (CONTRACT §26): writers on their own connections change one
// account at once, each to a value of its own, round after round. Every event of the
// account has its own number, and the one with the highest carries the value the
// account ends with — the number is taken in the change's transaction, from a row it
// holds until commit, so no change can commit after one that numbered later.
func TestSequenceIsCommitOrder(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		const rounds, writers = 100, 6
		acct := newAccountEvent(t, db)
		for round := range rounds {
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Go(func() {
					name := fmt.Sprintf("round %d writer %d", round, w)
					_, _, err := accounts.Update(ctx, db.st, db.env, acct.ObjectID,
						accounts.Input{Name: bodyfields.Of(name)}, idempotency.Reply[accounts.Object]{})
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			checkLastCarriesFinal(t, ctx, db, acct.ObjectID, 1+(round+1)*writers)
		}
	})
}

// checkLastCarriesFinal checks that the object's events are numbered 1..want, each once,
// and that the highest carries the account's name as it is now.
func checkLastCarriesFinal(t *testing.T, ctx context.Context, db seeded, id string, want int) {
	t.Helper()
	evs, err := db.st.EventsForObject(ctx, db.env, id)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	var last models.Event
	for _, ev := range evs {
		if ev.Sequence == nil || seen[*ev.Sequence] {
			t.Fatalf("event %s: sequence %v missing or repeated", ev.ID, ev.Sequence)
		}
		seen[*ev.Sequence] = true
		if last.Sequence == nil || *ev.Sequence > *last.Sequence {
			last = ev
		}
	}
	if len(evs) != want || *last.Sequence != int64(want) {
		t.Fatalf("%d events, highest %d; want 1..%d", len(evs), *last.Sequence, want)
	}
	var body struct {
		Event   struct{ ID string }
		Account struct{ Name string }
	}
	if err := json.Unmarshal([]byte(last.Payload), &body); err != nil {
		t.Fatal(err)
	}
	a, err := db.st.Account(ctx, db.env, id)
	if err != nil {
		t.Fatal(err)
	}
	if body.Account.Name != a.Name {
		t.Fatalf("the highest sequence (%d) carries %q, the account ends %q", *last.Sequence, body.Account.Name, a.Name)
	}
}

// A change that emits two events (sign: deal-updated then deal-signed, CONTRACT §7)
// numbers them in the order it emits them, after the deal's earlier events; another
// object's numbers are its own.
func TestSequenceNumbersEmissionOrder(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		acct := newAccountEvent(t, db)
		price, currency, precision := "100", "USD", "2"
		_, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error {
			d := models.Deal{ID: "deal-seq", AccountID: acct.ObjectID, Status: models.DealApproved, Skus: "[]", Terms: "[]",
				NetPrice: &price, NetPriceCurrency: &currency, NetPricePrecision: &precision}
			if err := tx.InsertDeal(&d); err != nil {
				return err
			}
			tx.Emit(store.Emit{Type: deals.EventCreated, ObjectType: "deal", ObjectID: d.ID, Object: map[string]string{"id": d.ID}})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, evs, err := deals.Act(ctx, db.st, db.env, "deal-seq", deals.ActionSign, idempotency.Reply[deals.Object]{})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || evs[0].Type != deals.EventUpdated || evs[1].Type != deals.EventSigned ||
			*evs[0].Sequence != 2 || *evs[1].Sequence != 3 {
			t.Fatalf("sign's events: %+v", evs)
		}
		stored, err := db.st.EventsForObject(ctx, db.env, "deal-seq")
		if err != nil || len(stored) != 3 || *stored[0].Sequence != 1 || *stored[1].Sequence != 2 || *stored[2].Sequence != 3 {
			t.Fatalf("stored: %+v %v", stored, err)
		}
		if *acct.Sequence != 1 {
			t.Fatalf("the account's first event: %v", *acct.Sequence)
		}
	})
}

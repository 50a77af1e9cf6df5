package store_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// TestDealOutboxOnBothDatabases writes an account and a deal with their events on
// PostgreSQL and SQLite (whose driver drops FOR UPDATE: its one connection serialises).
func TestDealOutboxOnBothDatabases(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		st, env := db.st, db.env
		acct, evs, err := insertAccount(ctx, st, env, models.Account{ID: "acct-1", Name: "Globex", Status: "draft", Properties: "{}"}, emitOf("account-created"))
		if err != nil || len(evs) != 1 {
			t.Fatalf("create account: %v %v", evs, err)
		}
		var d models.Deal
		var a models.Account
		evs, err = st.InTx(ctx, env, func(tx *store.Tx) error {
			c, err := tx.LockAccount(acct.ID)
			if err != nil {
				return err
			}
			d = models.Deal{ID: "deal-1", AccountID: c.ID, Status: "draft", Skus: "[]", Terms: "[]"}
			if err := tx.InsertDeal(&d); err != nil {
				return err
			}
			tx.Emit(store.Emit{Type: "deal-created", ObjectType: "deal", ObjectID: d.ID, Object: map[string]string{"id": d.ID}})
			a = c
			a.Status = "active"
			if err := tx.SaveAccount(&a); err != nil {
				return err
			}
			tx.Emit(store.Emit{Type: "account-updated", ObjectType: "account", ObjectID: c.ID, Object: map[string]string{"id": c.ID}})
			return nil
		})
		if err != nil || d.ID != "deal-1" || a.Status != "active" || len(evs) != 2 || evs[1].Seq != 2 {
			t.Fatalf("create deal: %+v %+v %v %v", d, a, evs, err)
		}
		got, err := st.Account(ctx, env, acct.ID)
		if err != nil || got.Status != "active" || !got.UpdatedAt.Equal(d.UpdatedAt) {
			t.Fatalf("account after the deal's change: %+v %v (deal updated %v)", got, err, d.UpdatedAt)
		}
		all, err := st.EventsForObject(ctx, env, acct.ID)
		if err != nil || len(all) != 2 || all[0].Type != "account-created" || all[1].Type != "account-updated" ||
			all[1].Payload != `{"event":{"id":"`+all[1].ID+`","time":"`+all[1].Time+`","type":"account-updated"`+sequenceMember(all[1])+`},"account":{"id":"acct-1"}}` {
			t.Fatalf("events %+v %v", all, err)
		}
		_, err = st.InTx(ctx, env, func(tx *store.Tx) error {
			_, err := tx.LockAccount("nope")
			return err
		})
		if err == nil {
			t.Fatal("deal for an unknown account")
		}
	})
}

// sequenceMember is the body's event.sequence member of e (CONTRACT §26), "" when e has
// no sequence.
func sequenceMember(e models.Event) string {
	if e.Sequence == nil {
		return ""
	}
	return `,"sequence":` + strconv.FormatInt(*e.Sequence, 10)
}

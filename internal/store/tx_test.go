package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// insertAccount writes a and the events emit asks for in one change, as
// accounts.Create does.
func insertAccount(ctx context.Context, st *store.Store, env store.Env, a models.Account, emit func(models.Account) []store.Emit) (models.Account, []models.Event, error) {
	events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		if err := tx.InsertAccount(&a); err != nil {
			return err
		}
		tx.Emit(emit(a)...)
		return nil
	})
	return a, events, err
}

// emitOf emits one event of type typ for the account, its object the account's id.
func emitOf(typ string) func(models.Account) []store.Emit {
	return func(a models.Account) []store.Emit {
		return []store.Emit{{Type: typ, ObjectType: "account", ObjectID: a.ID, Object: map[string]string{"id": a.ID}}}
	}
}

// One change is one batch in the outbox: events emitted in several calls are numbered
// in order and stamped with the change's time, the time its rows show; a failing
// change leaves nothing behind.
func TestInTxWritesOneChange(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		st, env := db.st, db.env
		var a models.Account
		events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
			a = models.Account{ID: uuid.NewString(), Name: "Globex", Status: "draft", Properties: "{}"}
			if err := tx.InsertAccount(&a); err != nil {
				return err
			}
			tx.Emit(store.Emit{Type: "account-created", ObjectType: "account", ObjectID: a.ID, Object: a})
			time.Sleep(2 * time.Millisecond) // the change's time does not move on
			a.Status = "active"
			if err := tx.SaveAccount(&a); err != nil {
				return err
			}
			tx.Emit(store.Emit{Type: "account-updated", ObjectType: "account", ObjectID: a.ID, Object: a})
			return nil
		})
		if err != nil || len(events) != 2 || events[0].Seq != 1 || events[1].Seq != 2 ||
			events[0].Type != "account-created" || !events[1].CreatedAt.Equal(a.UpdatedAt) || !a.CreatedAt.Equal(a.UpdatedAt) {
			t.Fatalf("change: %+v %+v %v", a, events, err)
		}
		got, err := st.Account(ctx, env, a.ID)
		if err != nil || got.Status != "active" || !got.UpdatedAt.Equal(a.UpdatedAt) {
			t.Fatalf("stored %+v %v, want updated at %v", got, err, a.UpdatedAt)
		}

		boom := errors.New("boom")
		events, err = st.InTx(ctx, env, func(tx *store.Tx) error {
			cur, err := renameAccount(tx, a.ID, "Rolled back")
			if err != nil {
				return err
			}
			tx.Emit(store.Emit{Type: "account-updated", ObjectType: "account", ObjectID: cur.ID, Object: cur})
			return boom
		})
		if !errors.Is(err, boom) || events != nil {
			t.Fatalf("failed change: %v %v", events, err)
		}
		all, err := st.EventsForObject(ctx, env, a.ID)
		if got, _ := st.Account(ctx, env, a.ID); err != nil || len(all) != 2 || got.Name != "Globex" {
			t.Fatalf("after a rollback: %+v, events %d %v", got, len(all), err)
		}
		_, err = st.InTx(ctx, env, func(tx *store.Tx) error {
			_, err := tx.LockDeal("nope")
			return err
		})
		if !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("lock of an unknown deal: %v", err)
		}
	})
}

// The events of a change keep the trace of the context that made it (the outbox carries
// it to the workflow start); without one, none.
func TestInTxKeepsTheTrace(t *testing.T) {
	sc := oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: oteltrace.TraceID{0xab, 1}, SpanID: oteltrace.SpanID{0xcd, 2},
		TraceFlags: oteltrace.FlagsSampled})
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		for _, ctx := range []context.Context{oteltrace.ContextWithSpanContext(context.Background(), sc), context.Background()} {
			a := models.Account{ID: uuid.NewString(), Name: "Globex", Status: "draft", Properties: "{}"}
			_, events, err := insertAccount(ctx, db.st, db.env, a, func(a models.Account) []store.Emit {
				return []store.Emit{{Type: "account-created", ObjectType: "account", ObjectID: a.ID, Object: a}}
			})
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if oteltrace.SpanContextFromContext(ctx).IsValid() {
				want = "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
			}
			stored, err := db.st.Event(ctx, db.env, events[0].ID)
			if err != nil || events[0].TraceParent != want || stored.TraceParent != want {
				t.Fatalf("trace parent %q, stored %+v (err %v), want %q", events[0].TraceParent, stored, err, want)
			}
		}
	})
}

// A savepoint's error undoes what it did, its row locks included (PostgreSQL: another
// session can lock the row while the transaction goes on), and the transaction keeps
// what its other savepoints did.
func TestSavepointUndoesItsWritesAndLocks(t *testing.T) {
	ctx := context.Background()
	url := testdb.URL(t)
	st := testdb.Open(t, url)
	env := testdb.Seed(t, st, "sandbox")
	locked, _, err := insertAccount(ctx, st, env, models.Account{ID: uuid.NewString(), Name: "Locked", Status: "draft", Properties: "{}"}, func(models.Account) []store.Emit { return nil })
	if err != nil {
		t.Fatal(err)
	}
	other := testdb.Raw(t, "postgres", url)
	refused := errors.New("refused")
	kept, undone := uuid.NewString(), uuid.NewString()
	_, err = st.InTx(ctx, env, func(tx *store.Tx) error {
		err := tx.Savepoint(func(tx *store.Tx) error {
			if _, err := tx.LockAccount(locked.ID); err != nil {
				return err
			}
			if err := tx.InsertAccount(&models.Account{ID: undone, Name: "Undone", Status: "draft", Properties: "{}"}); err != nil {
				return err
			}
			return refused
		})
		if !errors.Is(err, refused) {
			t.Fatalf("savepoint: %v, want its own error", err)
		}
		var id string
		if err := other.Raw("SELECT id FROM accounts WHERE id = ? FOR UPDATE NOWAIT", locked.ID).Scan(&id).Error; err != nil {
			t.Fatalf("the refused savepoint still holds its row lock: %v", err)
		}
		return tx.Savepoint(func(tx *store.Tx) error {
			return tx.InsertAccount(&models.Account{ID: kept, Name: "Kept", Status: "draft", Properties: "{}"})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Account(ctx, env, kept); err != nil {
		t.Fatalf("the successful savepoint's row: %v", err)
	}
	if _, err := st.Account(ctx, env, undone); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("the refused savepoint's row: %v, want not found", err)
	}
}

// A change may emit many events, each with a delivery per endpoint: 1,000 events to 16
// endpoints is 16,000 deliveries, far past PostgreSQL's 65,535 parameters in one INSERT
// (CONTRACT §21); they are written all the same, in bounded statements.
func TestOneChangeWritesManyEventsToManyEndpoints(t *testing.T) {
	const events = 1000
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		for range webhook.MaxEndpoints {
			newEndpoint(t, db, "https://a.example/", nil, true)
		}
		evs, err := db.st.InTx(context.Background(), db.env, func(tx *store.Tx) error {
			for i := range events {
				tx.Emit(store.Emit{Type: "account-created", ObjectType: "account", ObjectID: fmt.Sprint("acct-", i), Object: map[string]int{"n": i}})
			}
			return nil
		})
		if err != nil || len(evs) != events {
			t.Fatalf("%d events written (%v), want %d", len(evs), err, events)
		}
		if n := countWhere(t, db, "webhook_deliveries", "environment_id = ?", db.env.ID); n != events*webhook.MaxEndpoints {
			t.Fatalf("%d deliveries, want %d", n, events*webhook.MaxEndpoints)
		}
	})
}

// renameAccount locks the account id and saves it named name, in tx.
func renameAccount(tx *store.Tx, id, name string) (models.Account, error) {
	cur, err := tx.LockAccount(id)
	if err != nil {
		return cur, err
	}
	cur.Name = name
	return cur, tx.SaveAccount(&cur)
}

package accounts

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Object is an account as the API returns it and webhooks carry it (CONTRACT §6).
type Object struct {
	ID           string          `json:"id"`
	Object       string          `json:"object"`
	Name         string          `json:"name"`
	ExternalID   *string         `json:"external_id"`
	Domain       *string         `json:"domain"`
	BillingEmail *string         `json:"billing_email"`
	Status       string          `json:"status"`
	Properties   json.RawMessage `json:"properties"`
	CreatedAt    string          `json:"created_at"`
	UpdatedAt    string          `json:"updated_at"`
}

// TimeFormat is how objects show created_at and updated_at: RFC 3339, UTC, with the
// fraction the database keeps (so receivers can order changes within one second).
const TimeFormat = time.RFC3339Nano

// ToObject converts a stored account to its API form.
func ToObject(a models.Account) Object {
	props := json.RawMessage(a.Properties)
	if len(props) == 0 {
		props = json.RawMessage("{}")
	}
	return Object{
		ID: a.ID, Object: "account", Name: a.Name, ExternalID: a.ExternalID, Domain: a.Domain,
		BillingEmail: a.BillingEmail, Status: a.Status, Properties: props,
		CreatedAt: a.CreatedAt.UTC().Format(TimeFormat), UpdatedAt: a.UpdatedAt.UTC().Format(TimeFormat),
	}
}

// Emit is the event of an account change, carrying the account as it is after the
// change (obj, converted once for the events and the answer).
func Emit(typ string, obj Object) store.Emit {
	return store.Emit{Type: typ, ObjectType: "account", ObjectID: obj.ID, Object: obj}
}

// Store is what accounts need from the database.
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	Account(ctx context.Context, env models.Env, id string) (models.Account, error)
	Accounts(ctx context.Context, env models.Env, f store.AccountFilter, page models.Page) ([]models.Account, bool, error)
}

var _ Store = (*store.Store)(nil)

// Create validates in and writes a draft account with its account-created event; reply
// keeps the answer with it.
func Create(ctx context.Context, st Store, env models.Env, in Input, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	if err := Validate(in, true); err != nil {
		return Object{}, nil, err
	}
	a, _, err := Apply(models.Account{ID: uuid.NewString(), Status: models.AccountDraft, Properties: "{}"}, in)
	if err != nil {
		return Object{}, nil, err
	}
	var obj Object
	events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		if err := tx.InsertAccount(&a); err != nil {
			return err
		}
		obj = ToObject(a)
		tx.Emit(Emit("account-created", obj))
		return reply.Keep(tx, obj)
	})
	if err != nil {
		return Object{}, nil, err
	}
	return obj, events, nil
}

// Update applies a PATCH: nothing changed → no write and no event; a deprovisioned
// account refuses (409).
func Update(ctx context.Context, st Store, env models.Env, id string, in Input, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	if err := Validate(in, false); err != nil {
		return Object{}, nil, err
	}
	return change(ctx, st, env, id, ActionUpdate, &in, reply)
}

// Activate moves a draft account to active (account-updated).
func Activate(ctx context.Context, st Store, env models.Env, id string, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	return change(ctx, st, env, id, ActionActivate, nil, reply)
}

// Deprovision soft-deletes an account (account-deleted only); it stays readable.
func Deprovision(ctx context.Context, st Store, env models.Env, id string, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	return change(ctx, st, env, id, ActionDeprovision, nil, reply)
}

// change is every change of an existing account: lock it, run the status machine for
// action, apply the edit (if any), and save and emit the action's event only when the
// account really changed.
func change(ctx context.Context, st Store, env models.Env, id, action string, edit *Input, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	var obj Object
	events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		cur, err := tx.LockAccount(id)
		if err != nil {
			return err
		}
		status, event, err := Transition(cur.Status, action)
		if err != nil {
			return err
		}
		next := cur
		if edit != nil {
			if next, _, err = Apply(cur, *edit); err != nil {
				return err
			}
		}
		next.Status = status
		if !changed(cur, next) {
			obj = ToObject(cur)
			return reply.Keep(tx, obj)
		}
		if err := tx.SaveAccount(&next); err != nil {
			return err
		}
		obj = ToObject(next)
		tx.Emit(Emit(event, obj))
		return reply.Keep(tx, obj)
	})
	if err != nil {
		return Object{}, nil, err
	}
	return obj, events, nil
}

// Get loads one account.
func Get(ctx context.Context, st Store, env models.Env, id string) (Object, error) {
	a, err := st.Account(ctx, env, id)
	if err != nil {
		return Object{}, err
	}
	return ToObject(a), nil
}

// Filter narrows a list of accounts (GET /v1/accounts): empty members do not filter.
type Filter struct {
	Status     string
	ExternalID string
}

// query is f in the store's words.
func (f Filter) query() store.AccountFilter {
	return store.AccountFilter{Status: f.Status, ExternalID: f.ExternalID}
}

// List returns one page of accounts, newest first.
func List(ctx context.Context, st Store, env models.Env, f Filter, page models.Page) ([]Object, bool, error) {
	rows, more, err := st.Accounts(ctx, env, f.query(), page)
	if err != nil {
		return nil, false, err
	}
	out := make([]Object, len(rows))
	for i, a := range rows {
		out[i] = ToObject(a)
	}
	return out, more, nil
}

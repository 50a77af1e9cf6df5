package accounts

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

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

// Emit is the event of an account change, carrying the account as it is after the change.
func Emit(typ string, a models.Account) store.Emit {
	return store.Emit{Type: typ, ObjectType: "account", ObjectID: a.ID, Object: ToObject(a)}
}

// Store is what account changes need from the database.
type Store interface {
	CreateAccount(ctx context.Context, env store.Env, a models.Account, emit func(models.Account) []store.Emit) (models.Account, []models.Event, error)
	UpdateAccount(ctx context.Context, env store.Env, id string, decide store.AccountDecision) (models.Account, []models.Event, error)
}

var _ Store = (*store.Store)(nil)

// Create validates in and writes a draft account with its account-created event.
func Create(ctx context.Context, st Store, env store.Env, in Input) (models.Account, []models.Event, error) {
	if err := Validate(in, true); err != nil {
		return models.Account{}, nil, err
	}
	a, _, err := Apply(models.Account{ID: uuid.NewString(), Status: models.AccountDraft, Properties: "{}"}, in)
	if err != nil {
		return models.Account{}, nil, err
	}
	return st.CreateAccount(ctx, env, a, func(saved models.Account) []store.Emit {
		return []store.Emit{Emit("account-created", saved)}
	})
}

// Update applies a PATCH: nothing changed → no write and no event; a deprovisioned
// account refuses (409).
func Update(ctx context.Context, st Store, env store.Env, id string, in Input) (models.Account, []models.Event, error) {
	if err := Validate(in, false); err != nil {
		return models.Account{}, nil, err
	}
	return st.UpdateAccount(ctx, env, id, decision(ActionUpdate, func(cur models.Account) (models.Account, bool, error) {
		return Apply(cur, in)
	}))
}

// Activate moves a draft account to active (account-updated).
func Activate(ctx context.Context, st Store, env store.Env, id string) (models.Account, []models.Event, error) {
	return st.UpdateAccount(ctx, env, id, decision(ActionActivate, nil))
}

// Deprovision soft-deletes an account (account-deleted only); it stays readable.
func Deprovision(ctx context.Context, st Store, env store.Env, id string) (models.Account, []models.Event, error) {
	return st.UpdateAccount(ctx, env, id, decision(ActionDeprovision, nil))
}

// decision runs the status machine for action, then edit (if any), and emits the
// action's event only when the account really changed.
func decision(action string, edit func(models.Account) (models.Account, bool, error)) store.AccountDecision {
	return func(cur models.Account, at time.Time) (*models.Account, []store.Emit, error) {
		status, event, err := Transition(cur.Status, action)
		if err != nil {
			return nil, nil, err
		}
		next := cur
		if edit != nil {
			if next, _, err = edit(cur); err != nil {
				return nil, nil, err
			}
		}
		next.Status = status
		if !changed(cur, next) {
			return nil, nil, nil
		}
		next.UpdatedAt = at
		return &next, []store.Emit{Emit(event, next)}, nil
	}
}

package deals

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what deals need from the database.
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	Deal(ctx context.Context, env models.Env, id string) (models.Deal, error)
	Deals(ctx context.Context, env models.Env, f store.DealFilter, page models.Page) ([]models.Deal, bool, error)
	Account(ctx context.Context, env models.Env, id string) (models.Account, error)
	AccountsByID(ctx context.Context, env models.Env, ids []string) (map[string]models.Account, error)
}

var _ Store = (*store.Store)(nil)

// Create validates in and writes a new deal (draft, or pending_approval with "submit":
// true) with its deal-created event; reply keeps the answer with it.
func Create(ctx context.Context, st Store, env models.Env, in Input, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	if err := Validate(in, true); err != nil {
		return Object{}, nil, err
	}
	action := ActionCreate
	if in.Submit.Set && !in.Submit.Null && in.Submit.Value {
		action = ActionCreateSubmitted
	}
	var obj Object
	events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		customer, err := lockCustomer(tx, in.Customer.Value.ID)
		if err != nil {
			return err
		}
		if err := usableCustomer(customer); err != nil {
			return err
		}
		status, types, err := Transition("", action)
		if err != nil {
			return err
		}
		next, err := Apply(models.Deal{ID: uuid.NewString(), Skus: "[]", Terms: "[]"}, in)
		if err != nil {
			return err
		}
		next.Status = status
		if err := tx.InsertDeal(&next); err != nil {
			return err
		}
		obj = ToObject(next, customer)
		tx.Emit(emits(types, obj)...)
		return reply.Keep(tx, obj)
	})
	if err != nil {
		return Object{}, nil, err
	}
	return obj, events, nil
}

// Edit applies a PATCH while the deal is draft or pending_approval; a PATCH that
// changes nothing writes nothing and sends no event.
func Edit(ctx context.Context, st Store, env models.Env, id string, in Input, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	if err := Validate(in, false); err != nil {
		return Object{}, nil, err
	}
	var obj Object
	events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		cur, err := tx.LockDeal(id)
		if err != nil {
			return err
		}
		customerID := cur.AccountID
		if in.Customer.Set {
			customerID = in.Customer.Value.ID
		}
		customer, err := lockCustomer(tx, customerID)
		if err != nil {
			return err
		}
		_, types, err := Transition(cur.Status, ActionEdit)
		if err != nil {
			return err
		}
		next, err := Apply(cur, in)
		if err != nil {
			return err
		}
		if !Changed(cur, next) {
			obj = ToObject(cur, customer)
			return reply.Keep(tx, obj)
		}
		if next.AccountID != cur.AccountID {
			if err := usableCustomer(customer); err != nil {
				return err
			}
		}
		if err := tx.SaveDeal(&next); err != nil {
			return err
		}
		obj = ToObject(next, customer)
		tx.Emit(emits(types, obj)...)
		return reply.Keep(tx, obj)
	})
	if err != nil {
		return Object{}, nil, err
	}
	return obj, events, nil
}

// Act performs a status action (submit, approve, sign, activate, void). Activating a
// deal whose account is still draft activates the account too (account-updated, after
// the deal's events).
func Act(ctx context.Context, st Store, env models.Env, id, action string, reply idempotency.Reply[Object]) (Object, []models.Event, error) {
	var obj Object
	events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		cur, err := tx.LockDeal(id)
		if err != nil {
			return err
		}
		customer, err := lockCustomer(tx, cur.AccountID)
		if err != nil {
			return err
		}
		status, types, err := Transition(cur.Status, action)
		if err != nil {
			return err
		}
		if action == ActionSign {
			if err := ReadyToSign(cur); err != nil {
				return err
			}
		}
		var (
			billed      *models.Account // the customer, when it is activated with the deal
			billedEvent string
		)
		if action == ActionActivate {
			if billed, billedEvent, err = customerActivation(customer); err != nil {
				return err
			}
		}
		next := cur
		next.Status = status
		if err := tx.SaveDeal(&next); err != nil {
			return err
		}
		// The snapshot shows none of the account's status, so it is the same after the
		// account's activation: one object serves the events and the answer.
		obj = ToObject(next, customer)
		tx.Emit(emits(types, obj)...)
		if billed != nil {
			if err := tx.SaveAccount(billed); err != nil {
				return err
			}
			tx.Emit(accounts.Emit(billedEvent, accounts.ToObject(*billed)))
		}
		return reply.Keep(tx, obj)
	})
	if err != nil {
		return Object{}, nil, err
	}
	return obj, events, nil
}

// lockCustomer locks the account a deal belongs to, or will; an account that is not in
// the environment is a fault of the request's customer.id.
func lockCustomer(tx *store.Tx, id string) (models.Account, error) {
	a, err := tx.LockAccount(id)
	if errors.Is(err, apperr.ErrNotFound) {
		return a, apperr.Faults{{Param: "customer.id", Code: apperr.CodeParameterInvalid,
			Message: "customer.id is not an account of this environment."}}.Err()
	}
	return a, err
}

// customerActivation is the account's side of a deal's activation: the account made
// active, with its event type, when it is still draft; nil when it is active already.
// A deprovisioned account cannot be billed (409).
func customerActivation(customer models.Account) (*models.Account, string, error) {
	if err := usableCustomer(customer); err != nil {
		return nil, "", err
	}
	if customer.Status != models.AccountDraft {
		return nil, "", nil
	}
	status, event, err := accounts.Transition(customer.Status, accounts.ActionActivate)
	if err != nil {
		return nil, "", err
	}
	next := customer
	next.Status = status
	return &next, event, nil
}

// usableCustomer refuses a deprovisioned account: it accepts no new deals and no billing.
func usableCustomer(a models.Account) error {
	if a.Status == models.AccountDeprovisioned {
		return fmt.Errorf("%w: %w", apperr.ErrInvalidTransition, apperr.Conflict("invalid_state_transition",
			"Account %s is deprovisioned: it accepts no new deals and cannot be activated for billing.", a.ID))
	}
	return nil
}

// Get loads one deal with its customer snapshot.
func Get(ctx context.Context, st Store, env models.Env, id string) (Object, error) {
	d, err := st.Deal(ctx, env, id)
	if err != nil {
		return Object{}, err
	}
	a, err := st.Account(ctx, env, d.AccountID)
	if err != nil {
		return Object{}, fmt.Errorf("customer of deal %s: %w", id, err)
	}
	return ToObject(d, a), nil
}

// Filter narrows a list of deals (GET /v1/deals): empty members do not filter.
type Filter struct {
	Status     string
	CustomerID string
}

// query is f in the store's words.
func (f Filter) query() store.DealFilter {
	return store.DealFilter{Status: f.Status, CustomerID: f.CustomerID}
}

// List returns one page of deals, newest first, with their customers.
func List(ctx context.Context, st Store, env models.Env, f Filter, page models.Page) ([]Object, bool, error) {
	rows, more, err := st.Deals(ctx, env, f.query(), page)
	if err != nil {
		return nil, false, err
	}
	ids := make([]string, 0, len(rows))
	for _, d := range rows {
		ids = append(ids, d.AccountID)
	}
	customers, err := st.AccountsByID(ctx, env, ids)
	if err != nil {
		return nil, false, err
	}
	out := make([]Object, len(rows))
	for i, d := range rows {
		out[i] = ToObject(d, customers[d.AccountID])
	}
	return out, more, nil
}

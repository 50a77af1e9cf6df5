package deals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/accounts"
	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what deals need from the database.
type Store interface {
	CreateDeal(ctx context.Context, env store.Env, customerID string, build func(models.Account, time.Time) (store.DealChange, error)) (models.Deal, models.Account, []models.Event, error)
	UpdateDeal(ctx context.Context, env store.Env, id, customerID string, decide store.DealDecision) (models.Deal, models.Account, []models.Event, error)
	Deal(ctx context.Context, env store.Env, id string) (models.Deal, error)
	Deals(ctx context.Context, env store.Env, f store.DealFilter, page store.Page) ([]models.Deal, bool, error)
	Account(ctx context.Context, env store.Env, id string) (models.Account, error)
	AccountsByID(ctx context.Context, env store.Env, ids []string) (map[string]models.Account, error)
}

var _ Store = (*store.Store)(nil)

// Create validates in and writes a new deal (draft, or pending_approval with "submit":
// true) with its deal-created event.
func Create(ctx context.Context, st Store, env store.Env, in Input) (Object, []models.Event, error) {
	if err := Validate(in, true); err != nil {
		return Object{}, nil, err
	}
	action := ActionCreate
	if in.Submit.Set && !in.Submit.Null && in.Submit.Value {
		action = ActionCreateSubmitted
	}
	d, a, events, err := st.CreateDeal(ctx, env, in.Customer.Value.ID, func(customer models.Account, at time.Time) (store.DealChange, error) {
		if err := usableCustomer(customer); err != nil {
			return store.DealChange{}, err
		}
		status, types, err := Transition("", action)
		if err != nil {
			return store.DealChange{}, err
		}
		next, err := Apply(models.Deal{ID: uuid.NewString(), Skus: "[]", Terms: "[]"}, in)
		if err != nil {
			return store.DealChange{}, err
		}
		next.Status, next.CreatedAt, next.UpdatedAt = status, at, at
		return store.DealChange{Deal: &next, Events: emits(types, next, customer)}, nil
	})
	return result(d, a, events, err)
}

// Edit applies a PATCH while the deal is draft or pending_approval; a PATCH that
// changes nothing writes nothing and sends no event.
func Edit(ctx context.Context, st Store, env store.Env, id string, in Input) (Object, []models.Event, error) {
	if err := Validate(in, false); err != nil {
		return Object{}, nil, err
	}
	customerID := ""
	if in.Customer.Set {
		customerID = in.Customer.Value.ID
	}
	d, a, events, err := st.UpdateDeal(ctx, env, id, customerID, func(cur models.Deal, customer models.Account, at time.Time) (store.DealChange, error) {
		_, types, err := Transition(cur.Status, ActionEdit)
		if err != nil {
			return store.DealChange{}, err
		}
		next, err := Apply(cur, in)
		if err != nil || !Changed(cur, next) {
			return store.DealChange{}, err
		}
		if next.AccountID != cur.AccountID {
			if err := usableCustomer(customer); err != nil {
				return store.DealChange{}, err
			}
		}
		next.UpdatedAt = at
		return store.DealChange{Deal: &next, Events: emits(types, next, customer)}, nil
	})
	return result(d, a, events, err)
}

// Act performs a status action (submit, approve, sign, activate, void). Activating a
// deal whose account is still draft activates the account too (account-updated).
func Act(ctx context.Context, st Store, env store.Env, id, action string) (Object, []models.Event, error) {
	d, a, events, err := st.UpdateDeal(ctx, env, id, "", func(cur models.Deal, customer models.Account, at time.Time) (store.DealChange, error) {
		status, types, err := Transition(cur.Status, action)
		if err != nil {
			return store.DealChange{}, err
		}
		if action == ActionSign {
			if err := ReadyToSign(cur); err != nil {
				return store.DealChange{}, err
			}
		}
		next := cur
		next.Status, next.UpdatedAt = status, at
		ch := store.DealChange{Deal: &next, Events: emits(types, next, customer)}
		if action == ActionActivate {
			return activateCustomer(ch, customer, at)
		}
		return ch, nil
	})
	return result(d, a, events, err)
}

// activateCustomer adds the account's activation to a deal's activation when the
// account is still draft; a deprovisioned account cannot be billed (409).
func activateCustomer(ch store.DealChange, customer models.Account, at time.Time) (store.DealChange, error) {
	if err := usableCustomer(customer); err != nil {
		return store.DealChange{}, err
	}
	if customer.Status != models.AccountDraft {
		return ch, nil
	}
	status, event, err := accounts.Transition(customer.Status, accounts.ActionActivate)
	if err != nil {
		return store.DealChange{}, err
	}
	acct := customer
	acct.Status, acct.UpdatedAt = status, at
	ch.Account = &acct
	ch.Events = append(ch.Events, accounts.Emit(event, acct))
	return ch, nil
}

// usableCustomer refuses a deprovisioned account: it accepts no new deals and no billing.
func usableCustomer(a models.Account) error {
	if a.Status == models.AccountDeprovisioned {
		return fmt.Errorf("%w: %w", ErrInvalidTransition, apperr.Conflict("invalid_state_transition",
			"Account %s is deprovisioned: it accepts no new deals and cannot be activated for billing.", a.ID))
	}
	return nil
}

// result renders a change's outcome and maps an unknown customer to a 400 on customer.id.
func result(d models.Deal, a models.Account, events []models.Event, err error) (Object, []models.Event, error) {
	if errors.Is(err, store.ErrNoCustomer) {
		return Object{}, nil, apperr.Faults{{Param: "customer.id", Code: apperr.CodeParameterInvalid,
			Message: "customer.id is not an account of this environment."}}.Err()
	}
	if err != nil {
		return Object{}, nil, err
	}
	return ToObject(d, a), events, nil
}

// Get loads one deal with its customer snapshot.
func Get(ctx context.Context, st Store, env store.Env, id string) (Object, error) {
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

// List returns one page of deals, newest first, with their customers.
func List(ctx context.Context, st Store, env store.Env, f store.DealFilter, page store.Page) ([]Object, bool, error) {
	rows, more, err := st.Deals(ctx, env, f, page)
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

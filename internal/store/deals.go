package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 21, name: "deals", sql: `
CREATE TABLE deals (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment_id TEXT NOT NULL REFERENCES environments(id),
	account_id TEXT NOT NULL REFERENCES accounts(id),
	status TEXT NOT NULL CHECK (status IN ('draft', 'pending_approval', 'approved', 'signed', 'active', 'void')),
	contract_activates_date TEXT,
	net_price TEXT,
	net_price_currency TEXT,
	net_price_precision TEXT,
	original_net_price TEXT,
	original_net_price_currency TEXT,
	original_net_price_precision TEXT,
	opportunity_id TEXT,
	signed_contract_url TEXT,
	skus TEXT NOT NULL DEFAULT '[]',
	terms TEXT NOT NULL DEFAULT '[]',
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL
);
CREATE INDEX deals_env_created ON deals (environment_id, created_at, id);
CREATE INDEX deals_env_account ON deals (environment_id, account_id, created_at)`})
}

// ErrNoCustomer is returned when a deal names an account that is not in its environment.
var ErrNoCustomer = errors.New("customer account not found in this environment")

// DealFilter narrows a list of deals; empty fields do not filter.
type DealFilter struct {
	Status     string
	CustomerID string
}

// DealChange is what a decision about a deal wants written.
type DealChange struct {
	Deal    *models.Deal    // nil: the deal is unchanged and nothing is written
	Account *models.Account // non-nil: the customer account changes too
	Events  []Emit
}

// DealDecision looks at the locked deal and the locked account it will belong to and
// returns the change; an error rolls everything back.
// at is the time of the change: the new updated_at, which the event snapshots must show.
type DealDecision func(cur models.Deal, customer models.Account, at time.Time) (DealChange, error)

// CreateDeal locks the customer account, lets build make the deal, and writes the deal
// and its events in one transaction.
func (s *Store) CreateDeal(ctx context.Context, env Env, customerID string, build func(customer models.Account, at time.Time) (DealChange, error)) (models.Deal, models.Account, []models.Event, error) {
	return s.changeDeal(ctx, env, "", customerID, func(_ models.Deal, customer models.Account, at time.Time) (DealChange, error) {
		return build(customer, at)
	})
}

// UpdateDeal locks the deal, then its customer account (customerID when the change moves
// the deal to another account, else the current one), lets decide choose the change, and
// writes deal, account and events atomically. Two concurrent changes of one deal are
// serialised by the row lock, so both cannot start from the same status.
func (s *Store) UpdateDeal(ctx context.Context, env Env, id, customerID string, decide DealDecision) (models.Deal, models.Account, []models.Event, error) {
	return s.changeDeal(ctx, env, id, customerID, decide)
}

// DealResult is what a deal change leaves: the deal and its customer account, the
// result an idempotent request's answer is rendered from.
type DealResult struct {
	Deal    models.Deal
	Account models.Account
}

func (s *Store) changeDeal(ctx context.Context, env Env, id, customerID string, decide DealDecision) (models.Deal, models.Account, []models.Event, error) {
	var (
		deal   models.Deal
		acct   models.Account
		events []models.Event
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur models.Deal
		if id != "" {
			err := scope(tx, env).Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&cur).Error
			if err != nil {
				return notFound(err, "deal "+id)
			}
			if customerID == "" {
				customerID = cur.AccountID
			}
		}
		customer, err := lockAccount(tx, env, customerID)
		if errors.Is(err, apperr.ErrNotFound) {
			return fmt.Errorf("account %s: %w", customerID, ErrNoCustomer)
		}
		if err != nil {
			return err
		}
		at := changeTime()
		ch, err := decide(cur, customer, at)
		if err != nil {
			return err
		}
		deal, acct = cur, customer
		if ch.Deal == nil {
			return keepAnswer(ctx, tx, DealResult{Deal: deal, Account: acct})
		}
		if err := writeDeal(tx, env, id == "", ch.Deal, at); err != nil {
			return err
		}
		deal = *ch.Deal
		if ch.Account != nil {
			ch.Account.UpdatedAt = at
			if err := saveAccount(tx, env, *ch.Account); err != nil {
				return err
			}
			acct = *ch.Account
		}
		if events, err = writeEvents(tx, env, at, ch.Events); err != nil {
			return err
		}
		return keepAnswer(ctx, tx, DealResult{Deal: deal, Account: acct})
	})
	if err != nil {
		return models.Deal{}, models.Account{}, nil, err
	}
	return deal, acct, events, nil
}

// writeDeal inserts a new deal or saves every column of an existing one (scoped;
// UpdateColumns keeps our updated_at, as in saveAccount).
func writeDeal(tx *gorm.DB, env Env, insert bool, d *models.Deal, at time.Time) error {
	d.UpdatedAt = at
	if insert {
		d.OrganizationID, d.EnvironmentID, d.CreatedAt = env.OrganizationID, env.ID, at
		if err := tx.Create(d).Error; err != nil {
			return fmt.Errorf("create deal: %w", err)
		}
		return nil
	}
	res := scope(tx.Model(&models.Deal{}), env).Where("id = ?", d.ID).Select("*").Omit("id", "organization_id", "environment_id", "created_at").UpdateColumns(d)
	if res.Error != nil {
		return fmt.Errorf("save deal %s: %w", d.ID, res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("save deal %s: %d rows updated", d.ID, res.RowsAffected)
	}
	return nil
}

// Deal loads one deal of the environment.
func (s *Store) Deal(ctx context.Context, env Env, id string) (models.Deal, error) {
	var d models.Deal
	if err := s.in(ctx, env).Where("id = ?", id).Take(&d).Error; err != nil {
		return d, notFound(err, "deal "+id)
	}
	return d, nil
}

// Deals lists deals newest first.
func (s *Store) Deals(ctx context.Context, env Env, f DealFilter, page Page) ([]models.Deal, bool, error) {
	q := s.in(ctx, env)
	q = whereEq(q, "status", f.Status, "account_id", f.CustomerID)
	return paginate[models.Deal](q, "deals", page)
}

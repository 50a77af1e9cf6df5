package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 20, name: "accounts", sql: `
CREATE TABLE accounts (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment_id TEXT NOT NULL REFERENCES environments(id),
	name TEXT NOT NULL,
	external_id TEXT,
	domain TEXT,
	billing_email TEXT,
	status TEXT NOT NULL CHECK (status IN ('draft', 'active', 'deprovisioned')),
	properties TEXT NOT NULL DEFAULT '{}',
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL
);
CREATE INDEX accounts_env_created ON accounts (environment_id, created_at, id);
CREATE INDEX accounts_env_external ON accounts (environment_id, external_id)`})
}

// AccountFilter narrows a list of accounts; empty fields do not filter.
type AccountFilter struct {
	Status     string
	ExternalID string
}

// AccountDecision looks at the locked current account and returns the account to save
// (nil: nothing changed) and the events to write with it, or an error to roll back.
// at is the time of the change: the new updated_at, which the event snapshots must show.
type AccountDecision func(cur models.Account, at time.Time) (*models.Account, []Emit, error)

// CreateAccount writes a new account and its events in one transaction.
func (s *Store) CreateAccount(ctx context.Context, env Env, a models.Account, emit func(models.Account) []Emit) (models.Account, []models.Event, error) {
	at := changeTime()
	a.OrganizationID, a.EnvironmentID, a.CreatedAt, a.UpdatedAt = env.OrganizationID, env.ID, at, at
	var events []models.Event
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&a).Error; err != nil {
			return fmt.Errorf("create account: %w", err)
		}
		var err error
		if events, err = writeEvents(tx, env, at, emit(a)); err != nil {
			return err
		}
		return keepAnswer(ctx, tx, a)
	})
	if err != nil {
		return models.Account{}, nil, err
	}
	return a, events, nil
}

// UpdateAccount locks the account (FOR UPDATE; SQLite's single connection serialises
// instead), lets decide choose the change, and writes it with its events atomically.
func (s *Store) UpdateAccount(ctx context.Context, env Env, id string, decide AccountDecision) (models.Account, []models.Event, error) {
	var (
		out    models.Account
		events []models.Event
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := lockAccount(tx, env, id)
		if err != nil {
			return err
		}
		at := changeTime()
		next, emits, err := decide(cur, at)
		if err != nil {
			return err
		}
		if next == nil {
			out = cur
			return keepAnswer(ctx, tx, out)
		}
		next.UpdatedAt = at
		if err := saveAccount(tx, env, *next); err != nil {
			return err
		}
		out = *next
		if events, err = writeEvents(tx, env, at, emits); err != nil {
			return err
		}
		return keepAnswer(ctx, tx, out)
	})
	if err != nil {
		return models.Account{}, nil, err
	}
	return out, events, nil
}

func lockAccount(tx *gorm.DB, env Env, id string) (models.Account, error) {
	var a models.Account
	err := scope(tx, env).Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", id).Take(&a).Error
	if err != nil {
		return a, notFound(err, "account "+id)
	}
	return a, nil
}

// saveAccount writes every column of a (scoped: a row of another environment is never
// touched). UpdateColumns, not Updates: GORM would otherwise stamp updated_at with its own
// clock, and the stored time would differ from the one the response and events show.
func saveAccount(tx *gorm.DB, env Env, a models.Account) error {
	res := scope(tx.Model(&models.Account{}), env).Where("id = ?", a.ID).Select("*").Omit("id", "organization_id", "environment_id", "created_at").UpdateColumns(&a)
	if res.Error != nil {
		return fmt.Errorf("save account %s: %w", a.ID, res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("save account %s: %d rows updated", a.ID, res.RowsAffected)
	}
	return nil
}

// Account loads one account of the environment.
func (s *Store) Account(ctx context.Context, env Env, id string) (models.Account, error) {
	var a models.Account
	if err := s.in(ctx, env).Where("id = ?", id).Take(&a).Error; err != nil {
		return a, notFound(err, "account "+id)
	}
	return a, nil
}

// AccountsByID loads the accounts with the given ids, keyed by id (missing ids are absent).
func (s *Store) AccountsByID(ctx context.Context, env Env, ids []string) (map[string]models.Account, error) {
	out := make(map[string]models.Account, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []models.Account
	if err := s.in(ctx, env).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load accounts: %w", err)
	}
	for _, a := range rows {
		out[a.ID] = a
	}
	return out, nil
}

// Accounts lists accounts newest first.
func (s *Store) Accounts(ctx context.Context, env Env, f AccountFilter, page Page) ([]models.Account, bool, error) {
	q := s.in(ctx, env)
	q = whereEq(q, "status", f.Status, "external_id", f.ExternalID)
	return paginate[models.Account](q, "accounts", page)
}

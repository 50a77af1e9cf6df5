package store

import (
	"context"
	"fmt"

	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 20, name: "accounts", sql: scopedTable("accounts", "id", `
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
CREATE INDEX accounts_env_external ON accounts (environment_id, external_id)`)})
}

// AccountFilter narrows a list of accounts; empty fields do not filter.
type AccountFilter struct {
	Status     string
	ExternalID string
}

// LockAccount loads the account for update (FOR UPDATE; SQLite's single connection
// serialises instead): a second change of it waits until this transaction ends, so two
// changes can never both start from the same status.
func (tx *Tx) LockAccount(id string) (models.Account, error) {
	return lockRow[models.Account](tx, "account", id)
}

// InsertAccount writes a new account in the transaction's environment, created and
// updated at the change's time (set on a, so that what the caller shows is what is
// stored).
func (tx *Tx) InsertAccount(a *models.Account) error {
	at := tx.Now()
	a.OrganizationID, a.EnvironmentID, a.CreatedAt, a.UpdatedAt = tx.env.OrganizationID, tx.env.ID, at, at
	if err := tx.db.Create(a).Error; err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	return nil
}

// SaveAccount writes every column of a (saveRow) and stamps a.UpdatedAt with the
// change's time: save before taking the snapshot an event carries.
func (tx *Tx) SaveAccount(a *models.Account) error {
	a.UpdatedAt = tx.Now()
	return saveRow(tx, "account", a.ID, a)
}

// Account loads one account of the environment.
func (s *Store) Account(ctx context.Context, env Env, id string) (models.Account, error) {
	return takeRow[models.Account](s.in(ctx, env), "account "+id, "id = ?", id)
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

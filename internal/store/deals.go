package store

import (
	"context"
	"fmt"

	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 21, name: "deals", sql: scopedTable("deals", "id", `
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
CREATE INDEX deals_env_account ON deals (environment_id, account_id, created_at)`)})
}

// DealFilter narrows a list of deals; empty fields do not filter.
type DealFilter struct {
	Status     string
	CustomerID string
}

// LockDeal loads the deal for update (FOR UPDATE; SQLite's single connection
// serialises instead): two concurrent changes of one deal are serialised by the row
// lock, so both cannot start from the same status.
func (tx *Tx) LockDeal(id string) (models.Deal, error) {
	return lockRow[models.Deal](tx, "deal", id)
}

// InsertDeal writes a new deal in the transaction's environment, created and updated at
// the change's time (set on d, so that what the caller shows is what is stored).
func (tx *Tx) InsertDeal(d *models.Deal) error {
	at := tx.Now()
	d.OrganizationID, d.EnvironmentID, d.CreatedAt, d.UpdatedAt = tx.env.OrganizationID, tx.env.ID, at, at
	if err := tx.db.Create(d).Error; err != nil {
		return fmt.Errorf("create deal: %w", err)
	}
	return nil
}

// SaveDeal writes every column of an existing deal (saveRow) and stamps d.UpdatedAt with
// the change's time: save before taking the snapshot an event carries.
func (tx *Tx) SaveDeal(d *models.Deal) error {
	d.UpdatedAt = tx.Now()
	return saveRow(tx, "deal", d.ID, d)
}

// Deal loads one deal of the environment.
func (s *Store) Deal(ctx context.Context, env Env, id string) (models.Deal, error) {
	return takeRow[models.Deal](s.in(ctx, env), "deal "+id, "id = ?", id)
}

// Deals lists deals newest first.
func (s *Store) Deals(ctx context.Context, env Env, f DealFilter, page Page) ([]models.Deal, bool, error) {
	q := s.in(ctx, env)
	q = whereEq(q, "status", f.Status, "account_id", f.CustomerID)
	return paginate[models.Deal](q, "deals", page)
}

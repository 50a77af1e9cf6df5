package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 30, name: "webhooks", sql: `
CREATE TABLE webhook_endpoints (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment_id TEXT NOT NULL UNIQUE REFERENCES environments(id),
	url TEXT NOT NULL,
	method TEXT NOT NULL CHECK (method IN ('POST', 'GET')),
	enabled BOOLEAN NOT NULL,
	secret TEXT NOT NULL,
	previous_secret TEXT NOT NULL DEFAULT '',
	previous_until {{ts}},
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL
);
CREATE TABLE delivery_attempts (
	id TEXT PRIMARY KEY,
	event_id TEXT NOT NULL,
	environment_id TEXT NOT NULL REFERENCES environments(id),
	run_id TEXT NOT NULL DEFAULT '',
	number INTEGER NOT NULL,
	trigger TEXT NOT NULL,
	url TEXT NOT NULL DEFAULT '',
	method TEXT NOT NULL DEFAULT '',
	started_at {{ts}} NOT NULL,
	duration_ms BIGINT NOT NULL DEFAULT 0,
	status_code INTEGER NOT NULL DEFAULT 0,
	response_excerpt TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT '',
	outcome TEXT NOT NULL,
	created_at {{ts}} NOT NULL
);
CREATE INDEX delivery_attempts_event ON delivery_attempts (event_id, started_at)`})
}

// LockEndpoints serialises the endpoint writes of the transaction's environment (the
// count of a quota, the singular PUT's "create when none"): PostgreSQL locks the
// environment's row; a SQLite write transaction is exclusive already (_txlock=immediate).
func (tx *Tx) LockEndpoints() error { return lockEnvRow(tx.db, tx.dialect, tx.env) }

func lockEnvRow(tx *gorm.DB, dialect string, env Env) error {
	if dialect != "postgres" {
		return nil
	}
	var id string
	if err := tx.Raw("SELECT id FROM environments WHERE id = ? FOR UPDATE", env.ID).Scan(&id).Error; err != nil {
		return fmt.Errorf("lock environment: %w", err)
	}
	return nil
}

// forUpdate locks the rows a query reads until the transaction ends (PostgreSQL; SQLite
// transactions are exclusive).
func forUpdate(q *gorm.DB, dialect string) *gorm.DB {
	if dialect != "postgres" {
		return q
	}
	return q.Clauses(clause.Locking{Strength: "UPDATE"})
}

// InsertEndpoint writes a new endpoint in the transaction's environment, every column
// as given (its ID and timestamps set by the caller), with its health row (CONTRACT §23).
func (tx *Tx) InsertEndpoint(ep *models.WebhookEndpoint) error {
	ep.OrganizationID, ep.EnvironmentID = tx.env.OrganizationID, tx.env.ID
	// Select("*") writes Enabled=false too (GORM skips zero values otherwise).
	if err := tx.db.Select("*").Create(ep).Error; err != nil {
		return fmt.Errorf("create webhook endpoint: %w", err)
	}
	return insertHealth(tx.db, ep)
}

// LockEndpoint loads endpoint id for update (ErrNotFound in another environment).
func (tx *Tx) LockEndpoint(id string) (models.WebhookEndpoint, error) {
	return lockRow[models.WebhookEndpoint](tx, "webhook endpoint", id)
}

// OldestEndpoint loads the environment's oldest endpoint (ErrNotFound when there is
// none); lock the environment first (LockEndpoints) to keep it the oldest.
func (tx *Tx) OldestEndpoint() (models.WebhookEndpoint, error) {
	return oldestEndpoint(scope(tx.db, tx.env))
}

// Endpoint loads endpoint id as the transaction sees it (the columns as saved).
func (tx *Tx) Endpoint(id string) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	if err := scope(tx.db, tx.env).Where("id = ?", id).Take(&ep).Error; err != nil {
		return ep, notFound(err, "webhook endpoint "+id)
	}
	return ep, withHealth(tx.db, ep.EnvironmentID, &ep)
}

// SaveEndpoint writes every column of a locked endpoint but its identity and creation
// time.
func (tx *Tx) SaveEndpoint(ep *models.WebhookEndpoint) error {
	return saveRow(tx, "webhook endpoint", ep.ID, ep)
}

// WebhookEndpoints lists an environment's endpoints, newest first (CONTRACT §9).
func (s *Store) WebhookEndpoints(ctx context.Context, env Env, page Page) ([]models.WebhookEndpoint, bool, error) {
	rows, more, err := paginate[models.WebhookEndpoint](s.in(ctx, env), "webhook_endpoints", page)
	if err != nil {
		return nil, false, fmt.Errorf("webhook endpoints: %w", err)
	}
	return rows, more, withHealth(s.db.WithContext(ctx), env.ID, ptrs(rows)...)
}

// AllWebhookEndpoints lists every endpoint of the environment, oldest first (at most
// MaxEndpoints): the dashboard and the outbox need them all.
func (s *Store) AllWebhookEndpoints(ctx context.Context, env Env) ([]models.WebhookEndpoint, error) {
	var eps []models.WebhookEndpoint
	if err := s.in(ctx, env).Order("created_at, id").Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("webhook endpoints: %w", err)
	}
	return eps, withHealth(s.db.WithContext(ctx), env.ID, ptrs(eps)...)
}

// WebhookEndpointByID loads one endpoint of the environment.
func (s *Store) WebhookEndpointByID(ctx context.Context, env Env, id string) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	if err := s.in(ctx, env).Where("id = ?", id).Take(&ep).Error; err != nil {
		return ep, notFound(err, "webhook endpoint "+id)
	}
	return ep, withHealth(s.db.WithContext(ctx), env.ID, &ep)
}

// WebhookEndpoint loads the environment's oldest endpoint, the one the §8 singular routes
// act on (ErrNotFound when there is none).
func (s *Store) WebhookEndpoint(ctx context.Context, env Env) (models.WebhookEndpoint, error) {
	return oldestEndpoint(s.in(ctx, env))
}

func isNotFound(err error) bool { return errors.Is(err, apperr.ErrNotFound) }

func oldestEndpoint(q *gorm.DB) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	if err := q.Order("created_at, id").Take(&ep).Error; err != nil {
		return ep, notFound(err, "webhook endpoint")
	}
	return ep, nil
}

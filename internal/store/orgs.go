package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 1, name: "tenancy", sql: `
CREATE TABLE organizations (
	id TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	created_at {{ts}} NOT NULL
);
CREATE TABLE environments (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	name TEXT NOT NULL CHECK (name IN ('live', 'sandbox')),
	created_at {{ts}} NOT NULL,
	UNIQUE (organization_id, name)
);
CREATE TABLE organization_users (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	email TEXT NOT NULL UNIQUE,
	password_hash TEXT NOT NULL,
	created_at {{ts}} NOT NULL
);` + scopedTable("api_keys", "id", `
	environment TEXT NOT NULL,
	type TEXT NOT NULL CHECK (type IN ('public', 'secret')),
	prefix TEXT NOT NULL,
	last4 TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	created_at {{ts}} NOT NULL,
	expires_at {{ts}},
	revoked_at {{ts}},
	last_used_at {{ts}}
);
CREATE INDEX api_keys_org ON api_keys (organization_id, environment_id)`)})
}

// OrgScope is the scope of a transaction of an organization's own rows, which belong to
// none of its environments: the organization, its environments, its users and their
// sessions and browsers (InTx(ctx, OrgScope(id), …)). Their verbs scope every query by
// the organization (orgScope); an environment's verbs find nothing in such a
// transaction.
func OrgScope(orgID string) Env { return Env{OrganizationID: orgID} }

// Unauthenticated is the scope of a transaction made before anyone is known: the login
// throttle's counters, keyed by client and email (login_attempts.go), which no tenant
// owns.
var Unauthenticated = Env{}

// orgScope restricts a query of an organization's own rows to the transaction's
// organization, as scope does an environment's.
func orgScope(db *gorm.DB, env Env) *gorm.DB {
	return db.Where("organization_id = ?", env.OrganizationID)
}

// ErrEmailTaken is a user insert refused because another user has the email (emails are
// unique across organizations: a login names only its email).
var ErrEmailTaken = errors.New("email taken")

// InsertOrganization writes the transaction's organization (its id is the scope's).
func (tx *Tx) InsertOrganization(org *models.Organization) error {
	org.ID = tx.env.OrganizationID
	if err := tx.db.Create(org).Error; err != nil {
		return fmt.Errorf("create organization: %w", err)
	}
	return nil
}

// InsertEnvironment writes an environment of the organization.
func (tx *Tx) InsertEnvironment(e *models.Environment) error {
	e.OrganizationID = tx.env.OrganizationID
	if err := tx.db.Create(e).Error; err != nil {
		return fmt.Errorf("create %s environment: %w", e.Name, err)
	}
	return nil
}

// InsertUser writes a dashboard user of the organization; an email another user has is
// ErrEmailTaken.
func (tx *Tx) InsertUser(u *models.OrganizationUser) error {
	u.OrganizationID = tx.env.OrganizationID
	if err := tx.db.Create(u).Error; err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("create user: %w", ErrEmailTaken)
		}
		return fmt.Errorf("create user: %w", err)
	}
	return nil
}

// Organization loads one organization.
func (s *Store) Organization(ctx context.Context, id string) (models.Organization, error) {
	return takeRow[models.Organization](s.db.WithContext(ctx), "organization "+id, "id = ?", id)
}

// Organizations lists every organization, oldest first.
func (s *Store) Organizations(ctx context.Context) ([]models.Organization, error) {
	var orgs []models.Organization
	if err := s.db.WithContext(ctx).Order("created_at, id").Find(&orgs).Error; err != nil {
		return nil, fmt.Errorf("list organizations: %w", err)
	}
	return orgs, nil
}

// Environment finds an organization's environment by name.
func (s *Store) Environment(ctx context.Context, orgID, name string) (Env, error) {
	var e models.Environment
	err := s.db.WithContext(ctx).Where("organization_id = ? AND name = ?", orgID, name).Take(&e).Error
	if err != nil {
		return Env{}, notFound(err, fmt.Sprintf("environment %s of organization %s", name, orgID))
	}
	return Env{OrganizationID: e.OrganizationID, ID: e.ID, Name: e.Name}, nil
}

// UserByEmail loads a dashboard user.
func (s *Store) UserByEmail(ctx context.Context, email string) (models.OrganizationUser, error) {
	return takeRow[models.OrganizationUser](s.db.WithContext(ctx), "user", "email = ?", email)
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
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
);
CREATE TABLE api_keys (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment_id TEXT NOT NULL REFERENCES environments(id),
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
CREATE INDEX api_keys_org ON api_keys (organization_id, environment_id)`})
}

// CreateOrganization writes an organization, its two environments and its first user.
func (s *Store) CreateOrganization(ctx context.Context, name, email, passwordHash string) (models.Organization, error) {
	now := time.Now().UTC()
	org := models.Organization{ID: uuid.NewString(), Name: name, CreatedAt: now}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&org).Error; err != nil {
			return fmt.Errorf("create organization: %w", err)
		}
		for _, env := range []string{models.EnvLive, models.EnvSandbox} {
			e := models.Environment{ID: uuid.NewString(), OrganizationID: org.ID, Name: env, CreatedAt: now}
			if err := tx.Create(&e).Error; err != nil {
				return fmt.Errorf("create %s environment: %w", env, err)
			}
		}
		u := models.OrganizationUser{ID: uuid.NewString(), OrganizationID: org.ID, Email: email, PasswordHash: passwordHash, CreatedAt: now}
		if err := tx.Create(&u).Error; err != nil {
			if isUniqueViolation(err) {
				return apperr.Conflict("email_taken", "a user with email %s already exists", email)
			}
			return fmt.Errorf("create user: %w", err)
		}
		return nil
	})
	return org, err
}

// Organization loads one organization.
func (s *Store) Organization(ctx context.Context, id string) (models.Organization, error) {
	var org models.Organization
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&org).Error
	if err != nil {
		return org, notFound(err, "organization "+id)
	}
	return org, nil
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
	var u models.OrganizationUser
	err := s.db.WithContext(ctx).Where("email = ?", email).Take(&u).Error
	if err != nil {
		return u, notFound(err, "user")
	}
	return u, nil
}

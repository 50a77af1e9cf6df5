package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 40, name: "dashboard_sessions", sql: `
CREATE TABLE dashboard_sessions (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES organization_users(id),
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
	csrf_token TEXT NOT NULL,
	created_at {{ts}} NOT NULL,
	expires_at {{ts}} NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at)`})
}

// Dashboard sessions and users' passwords in a transaction of their organization
// (InTx(ctx, OrgScope(id), …)): the sessions and orgs packages decide (the cap of
// sessions a user holds, what a password reset ends), these read and write.

// LockUser reads the organization's user id and locks it until the transaction ends
// (PostgreSQL; SQLite's write transaction is exclusive): what decides by counting a
// user's rows (sessions, browsers) holds it, so racing logins take turns.
func (tx *Tx) LockUser(id string) (models.OrganizationUser, error) {
	q := forUpdate(orgScope(tx.db, tx.env), tx.dialect)
	return takeRow[models.OrganizationUser](q, "user "+id, "id = ?", id)
}

// SweepExpiredSessions deletes the organization's sessions expired at now.
func (tx *Tx) SweepExpiredSessions(now time.Time) error {
	if err := orgScope(tx.db, tx.env).Where("expires_at <= ?", now).Delete(&models.DashboardSession{}).Error; err != nil {
		return fmt.Errorf("sweep expired sessions: %w", err)
	}
	return nil
}

// KeepNewestSessions ends the user's sessions but the keep newest.
func (tx *Tx) KeepNewestSessions(userID string, keep int) error {
	err := tx.db.Exec(`DELETE FROM dashboard_sessions WHERE organization_id = ? AND user_id = ? AND id NOT IN (
	SELECT id FROM dashboard_sessions WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
		tx.env.OrganizationID, userID, userID, keep).Error
	if err != nil {
		return fmt.Errorf("end oldest sessions: %w", err)
	}
	return nil
}

// InsertSession stores a new session of the organization.
func (tx *Tx) InsertSession(sess *models.DashboardSession) error {
	sess.OrganizationID = tx.env.OrganizationID
	if err := tx.db.Create(sess).Error; err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// DeleteSession ends one of the organization's sessions (logout); an unknown one is
// harmless.
func (tx *Tx) DeleteSession(id string) error {
	if err := orgScope(tx.db, tx.env).Where("id = ?", id).Delete(&models.DashboardSession{}).Error; err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// SetSessionEnvironment switches the environment a session of the organization acts in.
func (tx *Tx) SetSessionEnvironment(id, env string) error {
	return tx.setOrgColumn(&models.DashboardSession{}, id, "environment", env, "switch session environment", "session")
}

// SetUserPassword replaces the password hash of the organization's user id.
func (tx *Tx) SetUserPassword(id, passwordHash string) error {
	return tx.setOrgColumn(&models.OrganizationUser{}, id, "password_hash", passwordHash, "set password", "user "+id)
}

// setOrgColumn sets column of the organization's row id of model's table; doing names
// the change in errors, and missing the row (apperr.ErrNotFound) when there is none.
func (tx *Tx) setOrgColumn(model any, id, column string, value any, doing, missing string) error {
	res := orgScope(tx.db.Model(model), tx.env).Where("id = ?", id).Update(column, value)
	if res.Error != nil {
		return fmt.Errorf("%s: %w", doing, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("%s: %w", missing, apperr.ErrNotFound)
	}
	return nil
}

// EndUserSessions ends every session of the organization's user id.
func (tx *Tx) EndUserSessions(id string) error {
	if err := orgScope(tx.db, tx.env).Where("user_id = ?", id).Delete(&models.DashboardSession{}).Error; err != nil {
		return fmt.Errorf("end sessions of user %s: %w", id, err)
	}
	return nil
}

// Session loads a session that has not expired at now; an expired one is not found.
func (s *Store) Session(ctx context.Context, id string, now time.Time) (models.DashboardSession, error) {
	return takeRow[models.DashboardSession](s.db.WithContext(ctx), "session", "id = ? AND expires_at > ?", id, now)
}

// User loads a dashboard user by id.
func (s *Store) User(ctx context.Context, id string) (models.OrganizationUser, error) {
	return takeRow[models.OrganizationUser](s.db.WithContext(ctx), "user", "id = ?", id)
}

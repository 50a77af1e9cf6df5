package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

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

// MaxSessions is how many dashboard sessions a user may hold; a new login ends the
// oldest (CONTRACT §17).
const MaxSessions = 20

// CreateSession stores a new dashboard session, ending the user's oldest ones past
// MaxSessions; old expired sessions are swept on the way, so the table never grows
// without bound. The user's row is locked (PostgreSQL; SQLite's write transactions are
// exclusive), so racing logins cannot leave more than MaxSessions.
func (s *Store) CreateSession(ctx context.Context, sess *models.DashboardSession) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("expires_at <= ?", sess.CreatedAt).Delete(&models.DashboardSession{}).Error; err != nil {
			return fmt.Errorf("sweep expired sessions: %w", err)
		}
		var u models.OrganizationUser
		if err := s.forUpdate(tx).Where("id = ?", sess.UserID).Take(&u).Error; err != nil {
			return notFound(err, "user "+sess.UserID)
		}
		err := tx.Exec(`DELETE FROM dashboard_sessions WHERE user_id = ? AND id NOT IN (
	SELECT id FROM dashboard_sessions WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
			sess.UserID, sess.UserID, MaxSessions-1).Error
		if err != nil {
			return fmt.Errorf("end oldest sessions: %w", err)
		}
		if err := tx.Create(sess).Error; err != nil {
			return fmt.Errorf("create session: %w", err)
		}
		return nil
	})
}

// Session loads a session that has not expired at now; an expired one is not found.
func (s *Store) Session(ctx context.Context, id string, now time.Time) (models.DashboardSession, error) {
	var sess models.DashboardSession
	err := s.db.WithContext(ctx).Where("id = ? AND expires_at > ?", id, now).Take(&sess).Error
	if err != nil {
		return sess, notFound(err, "session")
	}
	return sess, nil
}

// SetSessionEnvironment switches the environment a session acts in.
func (s *Store) SetSessionEnvironment(ctx context.Context, id, env string) error {
	res := s.db.WithContext(ctx).Model(&models.DashboardSession{}).Where("id = ?", id).Update("environment", env)
	if res.Error != nil {
		return fmt.Errorf("switch session environment: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("session: %w", apperr.ErrNotFound)
	}
	return nil
}

// DeleteSession ends a session (logout); deleting an unknown one is harmless.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := s.db.WithContext(ctx).Where("id = ?", id).Delete(&models.DashboardSession{}).Error; err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// ResetUserPassword replaces a user's password hash and ends every session of the user in
// the same transaction: whoever knew the old password (or held a session opened with it)
// is out as soon as the new one exists. The browsers the user signed in on are forgotten
// too (login_devices.go): one that signed in with the old password is a stranger again.
func (s *Store) ResetUserPassword(ctx context.Context, userID, passwordHash string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.OrganizationUser{}).Where("id = ?", userID).Update("password_hash", passwordHash)
		if res.Error != nil {
			return fmt.Errorf("set password: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("user %s: %w", userID, apperr.ErrNotFound)
		}
		if err := tx.Where("user_id = ?", userID).Delete(&models.DashboardSession{}).Error; err != nil {
			return fmt.Errorf("end sessions of user %s: %w", userID, err)
		}
		if err := tx.Where("user_id = ?", userID).Delete(&models.LoginDevice{}).Error; err != nil {
			return fmt.Errorf("forget login devices of user %s: %w", userID, err)
		}
		return nil
	})
}

// User loads a dashboard user by id.
func (s *Store) User(ctx context.Context, id string) (models.OrganizationUser, error) {
	var u models.OrganizationUser
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&u).Error; err != nil {
		return u, notFound(err, "user")
	}
	return u, nil
}

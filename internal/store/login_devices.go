package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 135, name: "login_devices", sql: `
CREATE TABLE login_devices (
	id TEXT PRIMARY KEY,
	user_id TEXT NOT NULL REFERENCES organization_users(id),
	created_at {{ts}} NOT NULL,
	expires_at {{ts}} NOT NULL
);
CREATE INDEX login_devices_user ON login_devices (user_id, created_at);
CREATE INDEX login_devices_expiry ON login_devices (expires_at)`})
}

// MaxLoginDevices is how many browsers a user is remembered on; signing in on another
// forgets the one first remembered (as MaxSessions).
const MaxLoginDevices = 20

// KnownDevice tells whether id is a device the user of email signed in on, still
// remembered at now.
func (s *Store) KnownDevice(ctx context.Context, id, email string, now time.Time) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Table("login_devices AS d").
		Joins("JOIN organization_users u ON u.id = d.user_id").
		Where("d.id = ? AND u.email = ? AND d.expires_at > ?", id, email, now).Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("look up login device: %w", err)
	}
	return n > 0, nil
}

// RememberDevice stores dev, or, when its id is already the user's, moves its expiry to
// dev's. The user's oldest devices past MaxLoginDevices are forgotten and expired ones
// swept on the way, under the user's row lock, so the table never grows without bound.
func (s *Store) RememberDevice(ctx context.Context, dev models.LoginDevice) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("expires_at <= ?", dev.CreatedAt).Delete(&models.LoginDevice{}).Error; err != nil {
			return fmt.Errorf("sweep expired login devices: %w", err)
		}
		var u models.OrganizationUser
		if err := s.forUpdate(tx).Where("id = ?", dev.UserID).Take(&u).Error; err != nil {
			return notFound(err, "user "+dev.UserID)
		}
		res := tx.Model(&models.LoginDevice{}).Where("id = ? AND user_id = ?", dev.ID, dev.UserID).
			Update("expires_at", dev.ExpiresAt)
		if res.Error != nil {
			return fmt.Errorf("renew login device: %w", res.Error)
		}
		if res.RowsAffected > 0 {
			return nil
		}
		err := tx.Exec(`DELETE FROM login_devices WHERE user_id = ? AND id NOT IN (
	SELECT id FROM login_devices WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`,
			dev.UserID, dev.UserID, MaxLoginDevices-1).Error
		if err != nil {
			return fmt.Errorf("forget oldest login devices: %w", err)
		}
		if err := tx.Create(&dev).Error; err != nil {
			return fmt.Errorf("remember login device: %w", err)
		}
		return nil
	})
}

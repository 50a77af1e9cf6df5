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

// The browsers a user signed in on, in a transaction of the user's organization
// (InTx(ctx, OrgScope(id), …)): the sessions package decides how many are remembered.
// login_devices has no organization of its own: its rows are scoped by their user's.

// orgDevices restricts a query of login_devices to the users of the transaction's
// organization.
func (tx *Tx) orgDevices() *gorm.DB {
	return tx.db.Where("user_id IN (SELECT id FROM organization_users WHERE organization_id = ?)", tx.env.OrganizationID)
}

// SweepExpiredDevices forgets the organization's browsers expired at now.
func (tx *Tx) SweepExpiredDevices(now time.Time) error {
	if err := tx.orgDevices().Where("expires_at <= ?", now).Delete(&models.LoginDevice{}).Error; err != nil {
		return fmt.Errorf("sweep expired login devices: %w", err)
	}
	return nil
}

// RenewDevice moves the expiry of dev, when its id is already its user's, to dev's; it
// tells whether it was.
func (tx *Tx) RenewDevice(dev models.LoginDevice) (bool, error) {
	res := tx.orgDevices().Model(&models.LoginDevice{}).Where("id = ? AND user_id = ?", dev.ID, dev.UserID).
		Update("expires_at", dev.ExpiresAt)
	if res.Error != nil {
		return false, fmt.Errorf("renew login device: %w", res.Error)
	}
	return res.RowsAffected > 0, nil
}

// KeepNewestDevices forgets the user's browsers but the keep newest.
func (tx *Tx) KeepNewestDevices(userID string, keep int) error {
	err := tx.orgDevices().Where(`user_id = ? AND id NOT IN (
	SELECT id FROM login_devices WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`, userID, userID, keep).
		Delete(&models.LoginDevice{}).Error
	if err != nil {
		return fmt.Errorf("forget oldest login devices: %w", err)
	}
	return nil
}

// InsertDevice remembers a browser of a user of the organization (LockUser: the
// caller read the user in the transaction's organization).
func (tx *Tx) InsertDevice(dev models.LoginDevice) error {
	if err := tx.db.Create(&dev).Error; err != nil {
		return fmt.Errorf("remember login device: %w", err)
	}
	return nil
}

// ForgetUserDevices forgets every browser of the organization's user id.
func (tx *Tx) ForgetUserDevices(id string) error {
	if err := tx.orgDevices().Where("user_id = ?", id).Delete(&models.LoginDevice{}).Error; err != nil {
		return fmt.Errorf("forget login devices of user %s: %w", id, err)
	}
	return nil
}

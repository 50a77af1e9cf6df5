package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// MaxKeys is how many active or expiring API keys an environment may have (CONTRACT §17).
const MaxKeys = 100

// ErrTooManyKeys refuses an environment's 101st active or expiring key. It comes wrapped
// in an *apperr.InvalidError with CodeTooManyKeys.
var ErrTooManyKeys = errors.New("too many api keys")

// CodeTooManyKeys is the error code of ErrTooManyKeys.
const CodeTooManyKeys = "too_many_keys"

// CreateAPIKey stores a new key (its hash only), refusing one past MaxKeys active or
// expiring keys in its environment, even under concurrent creates: the count is taken
// under the environment's lock (lockEnv).
func (s *Store) CreateAPIKey(ctx context.Context, k *models.APIKey) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.checkKeyCount(tx, k.EnvironmentID, k.CreatedAt, MaxKeys); err != nil {
			return err
		}
		if err := tx.Create(k).Error; err != nil {
			return fmt.Errorf("create api key: %w", err)
		}
		return nil
	})
}

// checkKeyCount locks the environment and refuses when it already has limit keys that
// are active or expiring at now.
func (s *Store) checkKeyCount(tx *gorm.DB, envID string, now time.Time, limit int) error {
	if err := s.lockEnv(tx, Env{ID: envID}); err != nil {
		return err
	}
	var n int64
	err := tx.Model(&models.APIKey{}).
		Where("environment_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", envID, now).
		Count(&n).Error
	if err != nil {
		return fmt.Errorf("count api keys: %w", err)
	}
	if n >= int64(limit) {
		return apperr.Invalid(ErrTooManyKeys, CodeTooManyKeys, "",
			"This environment already has %d active or expiring API keys, the most allowed here; revoke one first.", n)
	}
	return nil
}

// APIKeyByHash finds a key by the hash of the presented secret.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (models.APIKey, error) {
	var k models.APIKey
	if err := s.db.WithContext(ctx).Where("hash = ?", hash).Take(&k).Error; err != nil {
		return k, notFound(err, "api key")
	}
	return k, nil
}

// APIKey loads one key of an organization.
func (s *Store) APIKey(ctx context.Context, orgID, id string) (models.APIKey, error) {
	var k models.APIKey
	if err := s.db.WithContext(ctx).Where("organization_id = ? AND id = ?", orgID, id).Take(&k).Error; err != nil {
		return k, notFound(err, "api key "+id)
	}
	return k, nil
}

// APIKeys lists an organization's keys, newest first; env "" means both environments.
func (s *Store) APIKeys(ctx context.Context, orgID, env string) ([]models.APIKey, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	if env != "" {
		q = q.Where("environment = ?", env)
	}
	var keys []models.APIKey
	if err := q.Order("created_at DESC, id").Find(&keys).Error; err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey revokes a key at once; revoking twice is harmless.
func (s *Store) RevokeAPIKey(ctx context.Context, orgID, id string, at time.Time) (models.APIKey, error) {
	var k models.APIKey
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("organization_id = ? AND id = ?", orgID, id).Take(&k).Error; err != nil {
			return notFound(err, "api key "+id)
		}
		if k.RevokedAt != nil {
			return nil
		}
		k.RevokedAt = &at
		if err := tx.Model(&k).Update("revoked_at", at).Error; err != nil {
			return fmt.Errorf("revoke api key: %w", err)
		}
		return nil
	})
	return k, err
}

// RollAPIKey stores the replacement key and sets the old key to expire at expiresAt,
// in one transaction. A roll is allowed at MaxKeys (it replaces a key, CONTRACT §17); the
// old keys still expiring count too, so rolls are refused only from twice MaxKeys, which
// leaves room to roll every key of a full environment at once.
func (s *Store) RollAPIKey(ctx context.Context, orgID, oldID string, expiresAt time.Time, replacement *models.APIKey) (models.APIKey, error) {
	var old models.APIKey
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("organization_id = ? AND id = ?", orgID, oldID).Take(&old).Error; err != nil {
			return notFound(err, "api key "+oldID)
		}
		if old.RevokedAt != nil {
			return apperr.Conflict("api_key_revoked", "api key %s is revoked and cannot be rolled", oldID)
		}
		if err := s.checkKeyCount(tx, old.EnvironmentID, replacement.CreatedAt, 2*MaxKeys); err != nil {
			return err
		}
		if old.ExpiresAt == nil || old.ExpiresAt.After(expiresAt) {
			old.ExpiresAt = &expiresAt
			if err := tx.Model(&old).Update("expires_at", expiresAt).Error; err != nil {
				return fmt.Errorf("expire old key: %w", err)
			}
		}
		replacement.OrganizationID = old.OrganizationID
		replacement.EnvironmentID = old.EnvironmentID
		replacement.Environment = old.Environment
		replacement.Type = old.Type
		if err := tx.Create(replacement).Error; err != nil {
			return fmt.Errorf("create replacement key: %w", err)
		}
		return nil
	})
	return old, err
}

// TouchAPIKey records when a key was last used.
func (s *Store) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	if err := s.db.WithContext(ctx).Model(&models.APIKey{}).Where("id = ?", id).Update("last_used_at", at).Error; err != nil {
		return fmt.Errorf("touch api key: %w", err)
	}
	return nil
}

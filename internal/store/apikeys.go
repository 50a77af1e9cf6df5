package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// API keys in a transaction of their environment (InTx): the keys package decides (the
// quota of CONTRACT §17, what a roll or a revocation changes), these read and write.

// LockEnvironment locks the transaction's environment row until the transaction ends
// (PostgreSQL; SQLite's write transaction is exclusive): what decides by counting the
// environment's rows (its keys) holds it, so concurrent decisions take turns.
func (tx *Tx) LockEnvironment() error { return lockEnvRow(tx.db, tx.dialect, tx.env) }

// CountLiveAPIKeys counts the environment's keys that are active or expiring at now.
func (tx *Tx) CountLiveAPIKeys(now time.Time) (int64, error) {
	var n int64
	err := scope(tx.db.Model(&models.APIKey{}), tx.env).
		Where("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", now).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count api keys: %w", err)
	}
	return n, nil
}

// InsertAPIKey stores a new key (its hash only) in the transaction's environment.
func (tx *Tx) InsertAPIKey(k *models.APIKey) error {
	k.OrganizationID, k.EnvironmentID, k.Environment = tx.env.OrganizationID, tx.env.ID, tx.env.Name
	if err := tx.db.Create(k).Error; err != nil {
		return fmt.Errorf("create api key: %w", err)
	}
	return nil
}

// LockAPIKey reads the environment's key id and locks it until the transaction ends.
func (tx *Tx) LockAPIKey(id string) (models.APIKey, error) {
	return lockRow[models.APIKey](tx, "api key", id)
}

// SaveAPIKeyEnd writes when k stops working: its expiry and its revocation.
func (tx *Tx) SaveAPIKeyEnd(k models.APIKey) error {
	res := scope(tx.db.Model(&models.APIKey{}), tx.env).Where("id = ?", k.ID).
		UpdateColumns(map[string]any{"expires_at": k.ExpiresAt, "revoked_at": k.RevokedAt})
	if res.Error != nil {
		return fmt.Errorf("save api key %s: %w", k.ID, res.Error)
	}
	return nil
}

// APIKeyByHash finds a key by the hash of the presented secret.
func (s *Store) APIKeyByHash(ctx context.Context, hash string) (models.APIKey, error) {
	return takeRow[models.APIKey](s.db.WithContext(ctx), "api key", "hash = ?", hash)
}

// APIKey loads one key of an organization.
func (s *Store) APIKey(ctx context.Context, orgID, id string) (models.APIKey, error) {
	return takeRow[models.APIKey](s.db.WithContext(ctx), "api key "+id, "organization_id = ? AND id = ?", orgID, id)
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

// TouchAPIKey records when a key was last used. It is the one write of authentication,
// outside any transaction of the caller's: a stamp of last_used_at (at most once a minute
// a key, its failure ignored) that decides nothing, locks nothing and emits nothing, kept
// one statement so that a request's trace shows only its change's transaction (§19).
func (s *Store) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	if err := s.db.WithContext(ctx).Model(&models.APIKey{}).Where("id = ?", id).Update("last_used_at", at).Error; err != nil {
		return fmt.Errorf("touch api key: %w", err)
	}
	return nil
}

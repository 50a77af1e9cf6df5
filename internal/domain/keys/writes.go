package keys

import (
	"context"
	"errors"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// The writes of keys, each in one transaction of the key's environment (Store.InTx):
// the quota is decided here, under the environment's lock, and the store reads and
// writes (CONTRACT §2, §17).

// MaxKeys is how many active or expiring API keys an environment may have (CONTRACT §17).
const MaxKeys = 100

// ErrTooManyKeys refuses an environment's 101st active or expiring key. It comes wrapped
// in an *apperr.InvalidError with CodeTooManyKeys.
var ErrTooManyKeys = errors.New("too many api keys")

// CodeTooManyKeys is the error code of ErrTooManyKeys.
const CodeTooManyKeys = "too_many_keys"

// envOf is the environment a key belongs to.
func envOf(k models.APIKey) models.Env {
	return models.Env{OrganizationID: k.OrganizationID, ID: k.EnvironmentID, Name: k.Environment}
}

// insert stores a new key (its hash only) in its environment, refusing one past
// MaxKeys active or expiring keys, even under concurrent creates: the count is taken
// under the environment's lock.
func insert(ctx context.Context, st Store, k *models.APIKey) error {
	_, err := st.InTx(ctx, envOf(*k), func(tx *store.Tx) error {
		if err := checkRoom(tx, k.CreatedAt, MaxKeys); err != nil {
			return err
		}
		return tx.InsertAPIKey(k)
	})
	return err
}

// checkRoom locks the environment and refuses when it already has limit keys that are
// active or expiring at now.
func checkRoom(tx *store.Tx, now time.Time, limit int) error {
	if err := tx.LockEnvironment(); err != nil {
		return err
	}
	n, err := tx.CountLiveAPIKeys(now)
	if err != nil {
		return err
	}
	if n >= int64(limit) {
		return apperr.Invalid(ErrTooManyKeys, CodeTooManyKeys, "",
			"This environment already has %d active or expiring API keys, the most allowed here; revoke one first.", n)
	}
	return nil
}

// replace stores the replacement of the organization's key oldID and sets the old key
// to expire at expiresAt (unless it expires sooner), in one transaction, and returns the
// old key. A roll is allowed at MaxKeys (it replaces a key, CONTRACT §17); the old keys
// still expiring count too, so rolls are refused only from twice MaxKeys, which leaves
// room to roll every key of a full environment at once.
func replace(ctx context.Context, st Store, orgID, oldID string, expiresAt time.Time, replacement *models.APIKey) (models.APIKey, error) {
	old, err := st.APIKey(ctx, orgID, oldID) // its environment: the transaction's
	if err != nil {
		return old, err
	}
	_, err = st.InTx(ctx, envOf(old), func(tx *store.Tx) error {
		if old, err = tx.LockAPIKey(oldID); err != nil {
			return err
		}
		if old.RevokedAt != nil {
			return apperr.Conflict("api_key_revoked", "api key %s is revoked and cannot be rolled", oldID)
		}
		if err := checkRoom(tx, replacement.CreatedAt, 2*MaxKeys); err != nil {
			return err
		}
		if old.ExpiresAt == nil || old.ExpiresAt.After(expiresAt) {
			old.ExpiresAt = &expiresAt
			if err := tx.SaveAPIKeyEnd(old); err != nil {
				return err
			}
		}
		replacement.Type = old.Type
		return tx.InsertAPIKey(replacement)
	})
	return old, err
}

// revoke revokes the organization's key id at once; revoking twice is harmless.
func revoke(ctx context.Context, st Store, orgID, id string, at time.Time) (models.APIKey, error) {
	k, err := st.APIKey(ctx, orgID, id) // its environment: the transaction's
	if err != nil {
		return k, err
	}
	_, err = st.InTx(ctx, envOf(k), func(tx *store.Tx) error {
		if k, err = tx.LockAPIKey(id); err != nil || k.RevokedAt != nil {
			return err
		}
		k.RevokedAt = &at
		return tx.SaveAPIKeyEnd(k)
	})
	return k, err
}

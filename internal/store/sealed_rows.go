package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/models"
)

// The sealed columns of webhook_endpoints, the one table that keeps secrets (CONTRACT
// §25): read from the model's tags, so a field tagged sealed later is re-sealed and
// checked here without touching this file.
var sealedColumns = sync.OnceValue(func() []string {
	var cols []string
	for _, f := range modelSchema(&models.WebhookEndpoint{}).Fields {
		if f.TagSettings["SERIALIZER"] == "sealed" {
			cols = append(cols, f.DBName)
		}
	}
	return cols
})

// ResealBatch is how many endpoints one transaction of Reseal rewrites (CONTRACT §21).
const ResealBatch = 500

// Reseal seals, under the keyring's first key, every secret stored in clear (before
// CONTRACT §25) or under another key, and, once the store writes secrets bound to their
// row (SealsBound), every one still unbound: `revops migrate` runs it, after which the
// older keys can be dropped from REVOPS_ENCRYPTION_KEYS (and a later release may refuse
// the unbound form). Batches of batch endpoints, each in its own transaction, in id order
// (keyset): bounded, and idempotent (a second run finds nothing). It returns how many
// endpoints it rewrote. Its batches are a named exception to InTx (a job's own bounded
// batches, run by `revops migrate`).
func (s *Store) Reseal(ctx context.Context, batch int) (int, error) {
	if s.keyring == nil {
		return 0, fmt.Errorf("re-seal secrets: %w", secretbox.ErrNoKeyring)
	}
	stale, args := s.staleSealed()
	cols := sealedColumns()
	total, after := 0, ""
	for {
		n := 0
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var eps []models.WebhookEndpoint
			// Locked: a rotation at the same time must not be overwritten by the old secret.
			if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id > ?", after).Where(stale, args...).
				Order("id").Limit(batch).Find(&eps).Error; err != nil {
				return err
			}
			for i := range eps {
				// UpdateColumns: updated_at stays (re-sealing changes nothing a client sees).
				res := tx.Model(&models.WebhookEndpoint{}).Where("id = ?", eps[i].ID).Select(cols).UpdateColumns(&eps[i])
				if res.Error != nil {
					return res.Error
				}
			}
			n = len(eps)
			if n > 0 {
				after = eps[n-1].ID
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("re-seal webhook endpoint secrets: %w", err)
		}
		total += n
		if n < batch {
			return total, nil
		}
	}
}

// emptySealed are the stored values that hold nothing to seal: "" (what the serializer
// writes for "" and an empty map) and "{}" (an empty map some column defaults write).
const emptySealed = "('', '{}')"

// KeyUse is what the stored secrets need: the ids of the keys they are sealed under, how
// many are still in clear, and how many sealed unbound (sealed_form.go).
type KeyUse struct {
	KeyIDs  []string
	Clear   int64
	Unbound int64
}

// SecretKeyUse reads KeyUse: one DISTINCT scan of the key id prefix and two counts per
// sealed column (webhook_endpoints holds at most 16 rows per environment).
func (s *Store) SecretKeyUse(ctx context.Context) (KeyUse, error) {
	var use KeyUse
	start := len(secretbox.Prefix) + 1
	for _, c := range sealedColumns() {
		var ids []string
		if err := s.db.WithContext(ctx).Raw(fmt.Sprintf(`SELECT DISTINCT substr(%s, %d, %d) FROM webhook_endpoints WHERE %s LIKE ?`,
			c, start, secretbox.IDLen, c), secretbox.Prefix+"%").Scan(&ids).Error; err != nil {
			return use, fmt.Errorf("key ids of sealed %s: %w", c, err)
		}
		for _, id := range ids {
			if !slices.Contains(use.KeyIDs, id) {
				use.KeyIDs = append(use.KeyIDs, id)
			}
		}
		var clear int64
		if err := s.db.WithContext(ctx).Raw(fmt.Sprintf(`SELECT COUNT(*) FROM webhook_endpoints WHERE %s NOT IN %s AND %s NOT LIKE ?`, c, emptySealed, c),
			secretbox.Prefix+"%").Scan(&clear).Error; err != nil {
			return use, fmt.Errorf("clear %s: %w", c, err)
		}
		use.Clear += clear
		var unbound int64
		if err := s.db.WithContext(ctx).Raw(fmt.Sprintf(`SELECT COUNT(*) FROM webhook_endpoints WHERE %s LIKE ? AND %s NOT LIKE ?`, c, c),
			secretbox.Prefix+"%", boundLike).Scan(&unbound).Error; err != nil {
			return use, fmt.Errorf("unbound %s: %w", c, err)
		}
		use.Unbound += unbound
	}
	slices.Sort(use.KeyIDs)
	return use, nil
}

// CheckKeyring refuses a keyring that cannot read the stored secrets: one that lacks a
// key they are sealed under (named by id, never the key), or whose key of that id does
// not open them (one endpoint per key id is opened). A serving process runs it before
// it starts (CONTRACT §25).
func (s *Store) CheckKeyring(ctx context.Context) (KeyUse, error) {
	use, err := s.SecretKeyUse(ctx)
	if err != nil {
		return use, err
	}
	var missing []string
	for _, id := range use.KeyIDs {
		if !s.keyring.Has(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		listed := "REVOPS_ENCRYPTION_KEYS is not set"
		if s.keyring != nil {
			// The keys come from the variable or, for revops dev, from its data dir's key file.
			listed = "the keys given (REVOPS_ENCRYPTION_KEYS, or revops dev's encryption.key) are key id(s) " + strings.Join(s.keyring.IDs(), ", ")
		}
		return use, fmt.Errorf("stored secrets are sealed under key id(s) %s, and %s: list the key(s) that sealed them (a new key first, the old ones after it; `revops migrate` then moves every secret onto the first)",
			strings.Join(missing, ", "), listed)
	}
	for _, id := range use.KeyIDs {
		if err := s.openOneSealedUnder(ctx, id); err != nil {
			return use, err
		}
	}
	return use, nil
}

// openOneSealedUnder reads (so opens) one endpoint holding a secret sealed under key id.
func (s *Store) openOneSealedUnder(ctx context.Context, id string) error {
	var conds []string
	var args []any
	for _, c := range sealedColumns() {
		conds = append(conds, c+" LIKE ?")
		args = append(args, secretbox.Prefix+id+":%")
	}
	var eps []models.WebhookEndpoint
	if err := s.db.WithContext(ctx).Where(strings.Join(conds, " OR "), args...).Limit(1).Find(&eps).Error; err != nil {
		return fmt.Errorf("stored secrets under key id %s do not open with the key listed under that id: %w", id, err)
	}
	return nil
}

package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// Meter definitions in a request's transaction (InTx): the meters package decides, these
// read and write. A meter is created and deleted under its environment's usage cursor
// lock, so that the split between a new meter's backfill and the consumer is exact and
// no step in flight writes figures for a deleted meter.

// ErrMeterKeyTaken is a meter insert refused by the environment's unique key.
var ErrMeterKeyTaken = errors.New("meter key taken")

// LockUsageCursor waits for the environment's usage cursor (up to the request's lock
// timeout) and holds it until the transaction ends.
func (tx *Tx) LockUsageCursor() (UsageCursor, error) {
	c, _, err := lockCursor(tx.db, tx.dialect, tx.env.ID, Wait)
	return c, err
}

// CountMeters counts the environment's meters and the deleted ones whose figures await
// their purge: they hold a place among the environment's meters until then (CONTRACT §21).
func (tx *Tx) CountMeters() (int64, error) {
	return countMeterSlots(tx.db, tx.env.ID)
}

// MeterKeyTaken tells whether the environment has a meter with key.
func (tx *Tx) MeterKeyTaken(key string) (bool, error) {
	var n int64
	if err := scope(tx.db.Model(&models.Meter{}), tx.env).Where("key = ?", key).Count(&n).Error; err != nil {
		return false, fmt.Errorf("find meter key: %w", err)
	}
	return n > 0, nil
}

// OldestTakenBatch is the receipt time of the oldest batch the consumer took at or
// before generation gen (nil: none): a new meter's backfill starts there.
func (tx *Tx) OldestTakenBatch(gen int64) (*time.Time, error) {
	var got []time.Time
	if err := scope(tx.db.Table("usage_batches"), tx.env).Select("received_at").Where("gen IS NOT NULL AND gen <= ?", gen).
		Order("received_at").Limit(1).Scan(&got).Error; err != nil {
		return nil, fmt.Errorf("find batches to backfill: %w", err)
	}
	if len(got) == 0 {
		return nil, nil
	}
	at := got[0].UTC()
	return &at, nil
}

// BatchReceivedAt is the receipt time of the environment's batch seq.
func (tx *Tx) BatchReceivedAt(seq int64) (time.Time, error) {
	var got []time.Time
	if err := scope(tx.db.Table("usage_batches"), tx.env).Select("received_at").Where("seq = ?", seq).Scan(&got).Error; err != nil {
		return time.Time{}, fmt.Errorf("usage batch %d: %w", seq, err)
	}
	if len(got) == 0 {
		return time.Time{}, fmt.Errorf("usage batch %d: missing", seq)
	}
	return got[0].UTC(), nil
}

// CreateMeter inserts m in the environment (its id and times set here); a key the
// environment has already is ErrMeterKeyTaken.
func (tx *Tx) CreateMeter(m *models.Meter) error {
	now := tx.Now().Truncate(time.Microsecond)
	m.ID, m.OrganizationID, m.EnvironmentID = uuid.NewString(), tx.env.OrganizationID, tx.env.ID
	m.CreatedAt, m.UpdatedAt = now, now
	if m.GroupBy == nil {
		m.GroupBy = []string{}
	}
	if err := tx.db.Create(m).Error; err != nil {
		if isUniqueViolation(err) {
			return fmt.Errorf("create meter %s: %w", m.Key, ErrMeterKeyTaken)
		}
		return fmt.Errorf("create meter: %w", err)
	}
	return nil
}

// lockUsageCursor is LockUsageCursor for a store writer that runs its own transaction.
func (s *Store) lockUsageCursor(tx *gorm.DB, envID string, _ bool) (int64, error) {
	c, _, err := lockCursor(tx, s.dialect, envID, Wait)
	return c.Gen, err
}

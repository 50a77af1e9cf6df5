package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/models"
)

// Meter definitions in a request's transaction (InTx): the meters package decides, these
// read and write. A meter is created and deleted under its environment's usage cursor
// lock, so that the split between a new meter's backfill and the consumer is exact and
// no step in flight writes figures for a deleted meter.

// ErrMeterKeyTaken is a meter insert refused by the environment's unique key.
var ErrMeterKeyTaken = errors.New("meter key taken")

// CountMeters counts the environment's meters, and its deleted meters whose figures
// await their purge (meter_purges), in one statement.
func (tx *Tx) CountMeters() (meters, purging int64, err error) {
	return tx.countWithDeleted("meters", "meter_purges", "meters")
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
	if m.Status == models.MeterBackfilling {
		tx.startJob(BackfillOf(*m)) // its MeterBackfill workflow, after commit
	}
	return nil
}

// FindMeter reads the environment's meter key in the transaction, without a lock.
func (tx *Tx) FindMeter(key string) (models.Meter, error) {
	return takeRow[models.Meter](scope(tx.db, tx.env), "meter "+key, "key = ?", key)
}

// LockMeter reads the environment's meter key and locks it until the transaction ends.
func (tx *Tx) LockMeter(key string) (models.Meter, error) {
	q := forUpdate(scope(tx.db, tx.env), tx.dialect)
	return takeRow[models.Meter](q, "meter "+key, "key = ?", key)
}

// SaveMeterDescription writes m's description and updated_at.
func (tx *Tx) SaveMeterDescription(m models.Meter) error {
	if err := scope(tx.db.Model(&models.Meter{}), tx.env).Where("id = ?", m.ID).
		UpdateColumns(map[string]any{"description": m.Description, "updated_at": m.UpdatedAt}).Error; err != nil {
		return fmt.Errorf("update meter %s: %w", m.ID, err)
	}
	return nil
}

// DeleteMeter removes m's row and records its purge (meter_purges): its figures stay for
// its MeterPurge workflow, which deletes them page by page without the usage cursor lock.
// The caller holds that lock, so no consumer step or backfill page in flight writes
// figures for m afterwards (both read the meters once they hold it).
func (tx *Tx) DeleteMeter(m models.Meter) error {
	if err := tx.db.Exec("DELETE FROM meters WHERE id = ? AND environment_id = ?", m.ID, tx.env.ID).Error; err != nil {
		return fmt.Errorf("delete meter: %w", err)
	}
	if err := deleteMeterAlerts(tx.db, m.ID); err != nil {
		return err
	}
	p, err := recordMeterPurge(tx.db, m, tx.Now())
	if err != nil {
		return err
	}
	tx.startJob(PurgeOf(p)) // its MeterPurge workflow, after commit
	return nil
}

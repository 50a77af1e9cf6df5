package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// The alerts of a meter as the API defines them (CONTRACT §24): the meters package
// decides, these read and write. Every query names the meter as well as the environment,
// so that an alert is found only under its own meter's key.

// CountMeterAlerts counts the alerts of the environment's meter meterID. The caller
// holds the meter's row lock (LockMeter), so that concurrent creates count one by one.
func (tx *Tx) CountMeterAlerts(meterID string) (int64, error) {
	var n int64
	if err := scope(tx.db.Model(&models.MeterAlert{}), tx.env).Where("meter_id = ?", meterID).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count meter alerts: %w", err)
	}
	return n, nil
}

// InsertMeterAlert inserts a in the environment, its id and creation time set here.
func (tx *Tx) InsertMeterAlert(a *models.MeterAlert) error {
	a.ID, a.OrganizationID, a.EnvironmentID = uuid.NewString(), tx.env.OrganizationID, tx.env.ID
	a.CreatedAt = tx.Now().Truncate(time.Microsecond) // as both databases keep it, so that paging sees what was answered
	if err := tx.db.Create(a).Error; err != nil {
		return fmt.Errorf("create meter alert: %w", err)
	}
	return nil
}

// DeleteMeterAlert removes the alert id of the environment's meter meterID; an alert
// that is not there (never was, or a concurrent delete took it) is apperr.ErrNotFound.
// Its firings stay: they name an id no alert will have again.
func (tx *Tx) DeleteMeterAlert(meterID, id string) (models.MeterAlert, error) {
	var a models.MeterAlert
	if err := scope(tx.db, tx.env).Where("meter_id = ? AND id = ?", meterID, id).Take(&a).Error; err != nil {
		return a, notFound(err, "meter alert "+id)
	}
	res := tx.db.Exec("DELETE FROM meter_alerts WHERE id = ? AND meter_id = ? AND environment_id = ?", id, meterID, tx.env.ID)
	if res.Error != nil {
		return a, fmt.Errorf("delete meter alert: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return a, fmt.Errorf("meter alert %s: %w", id, apperr.ErrNotFound)
	}
	return a, nil
}

// MeterAlerts lists the alerts of the environment's meter meterID, newest first; a
// starting_after of another meter's alert is not of this list.
func (s *Store) MeterAlerts(ctx context.Context, env Env, meterID string, page Page) ([]models.MeterAlert, bool, error) {
	rows, more, err := paginate[models.MeterAlert](s.in(ctx, env).Where("meter_id = ?", meterID), "meter_alerts", page)
	if err != nil {
		return nil, false, fmt.Errorf("meter alerts: %w", err)
	}
	return rows, more, nil
}

// MeterAlert finds the alert id of the environment's meter meterID.
func (s *Store) MeterAlert(ctx context.Context, env Env, meterID, id string) (models.MeterAlert, error) {
	return takeRow[models.MeterAlert](s.in(ctx, env), "meter alert "+id, "meter_id = ? AND id = ?", meterID, id)
}

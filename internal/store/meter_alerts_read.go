package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// AlertsOfMeters returns the alerts of each listed meter of the environment, oldest first:
// at most perMeter × the meters (the API keeps perMeter, meters.MaxAlerts, a meter).
func (s *Store) AlertsOfMeters(ctx context.Context, env Env, meterIDs []string, perMeter int) (map[string][]models.MeterAlert, error) {
	out := make(map[string][]models.MeterAlert, len(meterIDs))
	if len(meterIDs) == 0 {
		return out, nil
	}
	var rows []models.MeterAlert
	if err := s.in(ctx, env).Where("meter_id IN ?", meterIDs).Order("created_at, id").
		Limit(perMeter * len(meterIDs)).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("alerts of meters: %w", err)
	}
	for _, a := range rows {
		out[a.MeterID] = append(out[a.MeterID], a)
	}
	return out, nil
}

// longestAlertWindow bounds how long ago a window that still contains now began: a
// month (CONTRACT §24's windows are day and month).
const longestAlertWindow = 31 * 24 * time.Hour

// FiringsNow returns the environment's alert firings whose window contains now (the
// series over a threshold in the current window), of the alerts in alertIDs only: at
// most limit, newest firing first; more tells whether others remain. The read is one
// range of meter_alert_firings_env_window: the windows begun within the last month.
func (s *Store) FiringsNow(ctx context.Context, env Env, alertIDs []string, now time.Time, limit int) (rows []models.MeterAlertFiring, more bool, err error) {
	if len(alertIDs) == 0 {
		return nil, false, nil
	}
	now = now.UTC()
	if err := s.in(ctx, env).Where("window_start > ? AND window_start <= ? AND window_end > ?", now.Add(-longestAlertWindow), now, now).
		Where("alert_id IN ?", alertIDs).Order("created_at DESC, alert_id, account_id, groups").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, false, fmt.Errorf("current alert firings: %w", err)
	}
	if len(rows) > limit {
		return rows[:limit], true, nil
	}
	return rows, false, nil
}

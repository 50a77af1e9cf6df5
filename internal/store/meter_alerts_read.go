package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
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

// FiringsNow returns the environment's alert firings whose window contains now (the
// series over a threshold in the current window), of the alerts in alertIDs only: at
// most limit, newest firing first; more tells whether others remain. Only two windows
// can contain now — today's and this month's (CONTRACT §24) — so the read is two ranges
// of meter_alert_firings_env_window_created, each newest first and cut at limit+1
// (§21: a page view never reads every firing of a busy month).
func (s *Store) FiringsNow(ctx context.Context, env Env, alertIDs []string, now time.Time, limit int) (rows []models.MeterAlertFiring, more bool, err error) {
	if len(alertIDs) == 0 {
		return nil, false, nil
	}
	now = now.UTC()
	day := now.Truncate(24 * time.Hour)
	for _, start := range []time.Time{day, time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)} {
		var part []models.MeterAlertFiring
		if err := s.in(ctx, env).Where("window_start = ? AND window_end > ? AND alert_id IN ?", start, now, alertIDs).
			Order("created_at DESC").Limit(limit + 1).Find(&part).Error; err != nil {
			return nil, false, fmt.Errorf("current alert firings: %w", err)
		}
		rows = append(rows, part...)
		if day.Day() == 1 {
			break // the month began today: one window start
		}
	}
	slices.SortStableFunc(rows, func(a, b models.MeterAlertFiring) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.AlertID, b.AlertID), strings.Compare(a.AccountID, b.AccountID), strings.Compare(a.Groups, b.Groups))
	})
	if len(rows) > limit {
		return rows[:limit], true, nil
	}
	return rows, false, nil
}

// Migration 111: the current windows' firings, newest first, for FiringsNow.
func init() {
	register(migration{version: 111, name: "meter_alert_firings_env_window_created", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS meter_alert_firings_env_window_created ON meter_alert_firings (environment_id, window_start, created_at)`})
}

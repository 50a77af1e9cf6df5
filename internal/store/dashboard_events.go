package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// DashboardEvent loads one event of the environment.
func (s *Store) DashboardEvent(ctx context.Context, env Env, id string) (models.Event, error) {
	var e models.Event
	if err := s.in(ctx, env).Where("id = ?", id).Take(&e).Error; err != nil {
		return e, notFound(err, "event "+id)
	}
	return e, nil
}

// AttemptStats summarises an event's delivery attempts.
type AttemptStats struct {
	EventID     string
	Count       int
	LastStarted time.Time
	LastMS      int64 // duration of the last attempt
	LastNumber  int   // the last attempt's number within its run
}

// DashboardAttemptStats returns the attempt count and last attempt of each listed event.
func (s *Store) DashboardAttemptStats(ctx context.Context, env Env, eventIDs []string) (map[string]AttemptStats, error) {
	out := map[string]AttemptStats{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	var rows []models.DeliveryAttempt
	err := s.in(ctx, env).Where("event_id IN ?", eventIDs).
		Select("event_id", "started_at", "duration_ms", "number").Order("started_at").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("attempt stats: %w", err)
	}
	for _, a := range rows {
		st := out[a.EventID]
		st.EventID, st.Count, st.LastStarted, st.LastMS, st.LastNumber = a.EventID, st.Count+1, a.StartedAt, a.DurationMS, a.Number
		out[a.EventID] = st
	}
	return out, nil
}

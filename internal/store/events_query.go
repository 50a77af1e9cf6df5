package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// EventFilter narrows event lists (GET /v1/events, bulk replay, the dashboard); empty
// fields do not filter. CreatedAfter is inclusive and CreatedBefore exclusive. With
// EndpointID, events match when they have a delivery to that endpoint, and Status
// applies to that delivery instead of the event.
type EventFilter struct {
	Type, Status, ObjectID      string
	EndpointID                  string
	CreatedAfter, CreatedBefore *time.Time
}

func (f EventFilter) apply(q *gorm.DB) *gorm.DB {
	if f.EndpointID != "" {
		// A delivery is in its event's environment; said here, PostgreSQL carries the
		// environment over to d, and a rare endpoint or status is read from
		// webhook_deliveries_env_endpoint instead of a scan of every delivery (or a walk
		// of the environment's events probing each): docs/benchmarks.md, issue 20.
		sub := "EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.environment_id = events.environment_id AND d.endpoint_id = ?"
		if f.Status != "" {
			q = q.Where(sub+" AND d.status = ?)", f.EndpointID, f.Status)
		} else {
			q = q.Where(sub+")", f.EndpointID)
		}
		f.Status = ""
	}
	q = whereEq(q, "type", f.Type, "status", f.Status, "object_id", f.ObjectID)
	q = whereRange(q, "created_at", f.CreatedAfter, f.CreatedBefore)
	return q
}

// Event reads one event of the environment (ErrNotFound: there is none there). The
// worker, which has an id from a workflow input and no environment, uses EventByID.
func (s *Store) Event(ctx context.Context, env Env, id string) (models.Event, error) {
	return takeRow[models.Event](s.in(ctx, env), "event "+id, "id = ?", id)
}

// Events lists an environment's events matching f, newest first.
func (s *Store) Events(ctx context.Context, env Env, f EventFilter, page Page) ([]models.Event, bool, error) {
	rows, more, err := paginate[models.Event](f.apply(s.in(ctx, env)), "events", page)
	if err != nil {
		return nil, false, fmt.Errorf("events: %w", err)
	}
	return rows, more, nil
}

// AttemptsOf returns the delivery attempts of each listed event, oldest first.
func (s *Store) AttemptsOf(ctx context.Context, env Env, eventIDs []string) (map[string][]models.DeliveryAttempt, error) {
	return ofEvents(s.in(ctx, env), eventIDs, "started_at, number", "attempts of events",
		func(a models.DeliveryAttempt) string { return a.EventID })
}

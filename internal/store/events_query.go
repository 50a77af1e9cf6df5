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
		sub := "EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.endpoint_id = ?"
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
	var e models.Event
	if err := s.in(ctx, env).Where("id = ?", id).Take(&e).Error; err != nil {
		return e, notFound(err, "event "+id)
	}
	return e, nil
}

// Events lists an environment's events matching f, newest first.
func (s *Store) Events(ctx context.Context, env Env, f EventFilter, page Page) ([]models.Event, bool, error) {
	rows, more, err := paginate[models.Event](f.apply(s.in(ctx, env)), "events", page)
	if err != nil {
		return nil, false, fmt.Errorf("events: %w", err)
	}
	return rows, more, nil
}

// CountEvents counts an environment's events matching f.
func (s *Store) CountEvents(ctx context.Context, env Env, f EventFilter) (int, error) {
	var n int64
	if err := f.apply(s.in(ctx, env)).Model(&models.Event{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count events: %w", err)
	}
	return int(n), nil
}

// EventsAfter lists up to limit events matching f, oldest first, strictly after the
// cursor (created_at, id) when one is given: the bulk replay walks them this way.
func (s *Store) EventsAfter(ctx context.Context, env Env, f EventFilter, cursorAt *time.Time, cursorID string, limit int) ([]models.Event, error) {
	q := f.apply(s.in(ctx, env))
	if cursorAt != nil {
		q = q.Where("(created_at > ?) OR (created_at = ? AND id > ?)", *cursorAt, *cursorAt, cursorID)
	}
	var rows []models.Event
	if err := q.Order("created_at, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("events to replay: %w", err)
	}
	return rows, nil
}

// AttemptsOf returns the delivery attempts of each listed event, oldest first.
func (s *Store) AttemptsOf(ctx context.Context, env Env, eventIDs []string) (map[string][]models.DeliveryAttempt, error) {
	out := make(map[string][]models.DeliveryAttempt, len(eventIDs))
	if len(eventIDs) == 0 {
		return out, nil
	}
	var rows []models.DeliveryAttempt
	if err := s.in(ctx, env).Where("event_id IN ?", eventIDs).Order("started_at, number").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("attempts of events: %w", err)
	}
	for _, a := range rows {
		out[a.EventID] = append(out[a.EventID], a)
	}
	return out, nil
}

// MarkReplayed records the new run of a replayed event and puts the event back to
// pending, unless the new run already recorded an attempt (it may be that fast): then
// the status that attempt set stands. The row is locked first, in its own statement: an
// attempt being recorded holds that lock until it commits, and under READ COMMITTED
// only a statement begun after that commit sees the attempt (one UPDATE that waited for
// the lock would still judge EXISTS by its older snapshot and undo a delivered status).
func (s *Store) MarkReplayed(ctx context.Context, env Env, eventID, workflowID, runID string, at time.Time) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		lock := scope(tx, env).Model(&models.Event{}).Where("id = ?", eventID).Update("updated_at", at)
		if lock.Error != nil {
			return fmt.Errorf("mark event %s replayed: %w", eventID, lock.Error)
		}
		return markReplayed(tx, env, eventID, workflowID, runID, at)
	})
}

func markReplayed(tx *gorm.DB, env Env, eventID, workflowID, runID string, at time.Time) error {
	var n int64
	if err := scope(tx.Model(&models.WebhookDelivery{}), env).Where("event_id = ?", eventID).Count(&n).Error; err != nil {
		return fmt.Errorf("deliveries of %s: %w", eventID, err)
	}
	status := gorm.Expr("CASE WHEN EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.event_id = events.id AND a.run_id = ?) THEN status ELSE ? END",
		runID, models.EventPending)
	if n > 0 {
		// The single-endpoint releases' replay: every delivery goes again, unless the new
		// run already recorded an attempt; deliveries of deleted endpoints stay skipped.
		res := scope(tx.Model(&models.WebhookDelivery{}), env).
			Where("event_id = ? AND NOT (status = ? AND last_error = ?)", eventID, models.EventSkipped, models.DeliveryEndpointDeleted).
			Where("NOT EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.event_id = ? AND a.run_id = ?)", eventID, runID).
			Updates(map[string]any{"status": models.EventPending, "last_error": "", "updated_at": at})
		if res.Error != nil {
			return fmt.Errorf("replay deliveries of %s: %w", eventID, res.Error)
		}
		status = gorm.Expr(summarySQL)
	}
	return updateEvent(tx, env, eventID, map[string]any{
		"workflow_id":   workflowID,
		"run_id":        runID,
		"dispatched_at": gorm.Expr("COALESCE(dispatched_at, ?)", at),
		"updated_at":    at,
		"status":        status,
	}, "mark replayed")
}

package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// unfinishedStatuses are the delivery statuses a workflow still works on.
var unfinishedStatuses = []string{models.EventPending, models.EventRetrying}

// summaryOrder is the precedence of an event's status over its deliveries' (CONTRACT
// §13): the first status any delivery has wins; none of them (no delivery, or all
// skipped) is skipped. SummarizeDeliveries and the SQL of summarizeEvent both read it.
var summaryOrder = []string{models.EventFailed, models.EventRetrying, models.EventPending, models.EventDelivered}

// SummarizeDeliveries is an event's status given its deliveries' statuses.
func SummarizeDeliveries(statuses []string) string {
	for _, want := range summaryOrder {
		for _, s := range statuses {
			if s == want {
				return want
			}
		}
	}
	return models.EventSkipped
}

// summarySQL is SummarizeDeliveries as an SQL expression over the events row: the
// first of summaryOrder any delivery has (the least rank), else skipped. One aggregate
// over the event's deliveries (by webhook_deliveries_event_endpoint), never EXISTS per
// status: PostgreSQL may run those over many events as hashed subplans, which read
// every delivery of every environment with that status (CONTRACT §21).
var summarySQL = func() string {
	var rank, name strings.Builder
	rank.WriteString("CASE d.status")
	name.WriteString("CASE MIN(")
	for i, st := range summaryOrder {
		fmt.Fprintf(&rank, " WHEN '%s' THEN %d", st, i)
	}
	rank.WriteString(" END")
	name.WriteString(rank.String() + ")")
	for i, st := range summaryOrder {
		fmt.Fprintf(&name, " WHEN %d THEN '%s'", i, st)
	}
	name.WriteString(" END")
	return fmt.Sprintf("COALESCE((SELECT %s FROM webhook_deliveries d WHERE d.event_id = events.id), '%s')",
		name.String(), models.EventSkipped)
}()

// summarizeEvent sets the event's status to the summary of its deliveries. Callers lock
// the event row (lockEvents) before they change a delivery, so that this statement,
// begun after that lock, sees every committed delivery of the event (READ COMMITTED).
func summarizeEvent(tx *gorm.DB, eventID string, now time.Time) error {
	return summarizeEvents(tx, now, eventID)
}

// summarizeEvents is summarizeEvent for several events, in one statement; every one of
// them must exist. Its callers bound the list (a page of a job at most): no statement
// takes a list that grows with an environment's data (CONTRACT §21).
func summarizeEvents(tx *gorm.DB, now time.Time, eventIDs ...string) error {
	if len(eventIDs) == 0 {
		return nil
	}
	res := tx.Model(&models.Event{}).Where("id IN ?", eventIDs).
		Updates(map[string]any{"status": gorm.Expr(summarySQL), "updated_at": now})
	if res.Error == nil && res.RowsAffected == int64(len(eventIDs)) {
		return nil
	}
	what := "event " + eventIDs[0]
	if len(eventIDs) > 1 {
		what = fmt.Sprintf("%d events", len(eventIDs))
	}
	if res.Error != nil {
		return fmt.Errorf("summarize %s: %w", what, res.Error)
	}
	return fmt.Errorf("%s: %w", what, apperr.ErrNotFound)
}

// lockEvents locks event rows in id order (PostgreSQL; SQLite transactions are
// exclusive): every change of a delivery's status locks its event first (here, or in
// its own statement: recordFanOutSQL), so two changes of one event's deliveries never
// summarise from stale rows nor deadlock.
func (s *Store) lockEvents(tx *gorm.DB, ids ...string) error {
	return lockEventRows(tx, s.dialect, ids...)
}

// lockEventRows is lockEvents for a transaction that knows its dialect (Tx). Its callers
// bound ids (one event, a claim of starts), as summarizeEvents's.
func lockEventRows(tx *gorm.DB, dialect string, ids ...string) error {
	if dialect != "postgres" || len(ids) == 0 {
		return nil
	}
	var got []string
	if err := tx.Raw("SELECT id FROM events WHERE id IN ? ORDER BY id FOR UPDATE", ids).Scan(&got).Error; err != nil {
		return fmt.Errorf("lock events: %w", err)
	}
	return nil
}

// EventDeliveries lists an event's deliveries, oldest first.
func (s *Store) EventDeliveries(ctx context.Context, env Env, eventID string) ([]models.WebhookDelivery, error) {
	m, err := s.DeliveriesOf(ctx, env, []string{eventID})
	return m[eventID], err
}

// DeliveriesOf returns the deliveries of each listed event, oldest first.
func (s *Store) DeliveriesOf(ctx context.Context, env Env, eventIDs []string) (map[string][]models.WebhookDelivery, error) {
	return ofEvents(s.in(ctx, env), eventIDs, "created_at, id", "deliveries of events",
		func(d models.WebhookDelivery) string { return d.EventID })
}

// ofEvents reads q's rows of T of each listed event, in order, keyed by their event's id
// (eventID); what names them in errors.
func ofEvents[T any](q *gorm.DB, eventIDs []string, order, what string, eventID func(T) string) (map[string][]T, error) {
	out := make(map[string][]T, len(eventIDs))
	if len(eventIDs) == 0 {
		return out, nil
	}
	var rows []T
	if err := q.Where("event_id IN ?", eventIDs).Order(order).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, r := range rows {
		out[eventID(r)] = append(out[eventID(r)], r)
	}
	return out, nil
}

// PendingDeliveries lists the event's deliveries that are pending (not yet started by a
// workflow run, or replayed) and not waiting in an order lane (CONTRACT §26: a waiting
// delivery has no run), oldest first, each with its endpoint id and retry policy.
// The fan-out workflow asks for them when it starts and after each replay signal. The id
// comes from the workflow input, as for EventByID.
func (s *Store) PendingDeliveries(ctx context.Context, eventID string) ([]models.WebhookDelivery, error) {
	var rows []models.WebhookDelivery
	err := s.db.WithContext(ctx).Where("event_id = ? AND status = ? AND waiting_for = ''", eventID, models.EventPending).
		Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("pending deliveries of %s: %w", eventID, err)
	}
	return rows, nil
}

// SetEventStatus sets an event's status and that of all its deliveries (tests and
// tools: deliveries change status through the functions of their workflow).
func (s *Store) SetEventStatus(ctx context.Context, env Env, eventID, status string) error {
	now := time.Now().UTC()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockEvents(tx, eventID); err != nil {
			return err
		}
		if err := scope(tx.Model(&models.WebhookDelivery{}), env).Where("event_id = ?", eventID).
			Updates(map[string]any{"status": status, "updated_at": now}).Error; err != nil {
			return fmt.Errorf("set status of deliveries of %s: %w", eventID, err)
		}
		return setEventStatus(tx, env, eventID, status, now)
	})
}

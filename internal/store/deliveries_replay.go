package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/domain/catalog"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/models"
)

func init() {
	// A replay counts itself on the delivery, so that the settling of a series of attempts
	// started before it (MarkDeliveryFailed) leaves the replayed delivery pending. A
	// constant default adds the column without rewriting the table (PostgreSQL 11+).
	register(migration{version: 69, name: "webhook_deliveries_replays", sql: `
ALTER TABLE webhook_deliveries ADD COLUMN replays INTEGER NOT NULL DEFAULT 0`})
}

// CodeDeliveryInProgress is the conflict of a replay whose delivery is still under way.
const CodeDeliveryInProgress = "delivery_in_progress"

// Replays refused for their endpoint_id: one that names no endpoint of the environment,
// and one whose endpoint is not subscribed to the event's type and never had a delivery
// of it.
var (
	ErrUnknownEndpoint       = errors.New("not a webhook endpoint of this environment")
	ErrEndpointNotSubscribed = errors.New("webhook endpoint not subscribed to the event's type")
)

// ReplayDeliveries decides a replay of an event in the database (CONTRACT §13), in one
// transaction under the event's row lock: the chosen deliveries — the one to endpointID,
// or all of them when endpointID is "" — go back to pending; if one of them is pending
// or retrying, nothing changes and the answer is a ConflictError delivery_in_progress
// naming its endpoint. Each delivery put back to pending counts the replay (replays + 1):
// see MarkDeliveryFailed. Without endpointID, endpoints enabled and subscribed now that
// had no delivery get one, and deliveries whose endpoint was deleted stay as they are. The
// event's status is summarised again and its redispatch_at set: the dispatcher (after
// commit) or the sweeper (EventsToRedispatch) reaches its workflow with SignalWithStart.
// An endpointID that is not an endpoint of the environment, or one not subscribed to the
// event's type that never had a delivery of it, is an *apperr.InvalidError on param
// endpoint_id (ErrUnknownEndpoint, ErrEndpointNotSubscribed).
func (s *Store) ReplayDeliveries(ctx context.Context, env Env, eventID, endpointID string) (models.Event, error) {
	var ev models.Event
	now := changeTime()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.forUpdate(scope(tx, env)).Where("id = ?", eventID).Take(&ev).Error; err != nil {
			return notFound(err, "event "+eventID)
		}
		var eps []models.WebhookEndpoint
		q := scope(tx, env).Order("created_at, id")
		if endpointID != "" {
			q = q.Where("id = ?", endpointID)
		}
		if err := q.Find(&eps).Error; err != nil {
			return fmt.Errorf("endpoints of replay: %w", err)
		}
		if endpointID != "" && len(eps) == 0 {
			return apperr.Invalid(ErrUnknownEndpoint, apperr.CodeParameterInvalid, "endpoint_id",
				"endpoint_id %q is not a webhook endpoint of this environment.", endpointID)
		}
		var ds []models.WebhookDelivery
		if err := scope(tx, env).Where("event_id = ?", eventID).Order("created_at, id").Find(&ds).Error; err != nil {
			return fmt.Errorf("deliveries of %s: %w", eventID, err)
		}
		chosen, fresh, err := replayChoice(ev, eps, ds, endpointID, now)
		if err != nil {
			return err
		}
		if len(chosen) > 0 {
			if err := scope(tx.Model(&models.WebhookDelivery{}), env).Where("id IN ?", chosen).Updates(map[string]any{
				"status": models.EventPending, "last_error": "", "replays": gorm.Expr("replays + 1"), "updated_at": now,
			}).Error; err != nil {
				return fmt.Errorf("replay deliveries of %s: %w", eventID, err)
			}
		}
		if len(fresh) > 0 {
			if err := tx.Create(&fresh).Error; err != nil {
				return fmt.Errorf("new deliveries of %s: %w", eventID, err)
			}
		}
		// The event's summary, and its mark for redispatch when a delivery goes again.
		set := map[string]any{"status": gorm.Expr(summarySQL), "updated_at": now}
		if len(chosen)+len(fresh) > 0 {
			set["redispatch_at"] = now
			set["redispatch_trace_parent"] = tracing.TraceParent(ctx)
		}
		if err := updateEvent(tx, env, eventID, set, "summarize replayed"); err != nil {
			return err
		}
		// No Reply: a request's replay keeps its answer in ReplayEvent, around this
		// transaction, and a bulk replay calls this once per event within one request.
		if err := scope(tx, env).Where("id = ?", eventID).Take(&ev).Error; err != nil {
			return fmt.Errorf("reload event %s: %w", eventID, err)
		}
		return nil
	})
	return ev, err
}

// replayChoice picks the deliveries a replay puts back to pending (ids) and the ones it
// creates, or the conflict that refuses it. eps are the endpoints concerned (one when
// endpointID is set); ds the event's deliveries.
func replayChoice(ev models.Event, eps []models.WebhookEndpoint, ds []models.WebhookDelivery, endpointID string, now time.Time) ([]string, []models.WebhookDelivery, error) {
	byEndpoint := map[string]models.WebhookDelivery{}
	for _, d := range ds {
		byEndpoint[d.EndpointID] = d
	}
	var chosen []string
	var fresh []models.WebhookDelivery
	for _, ep := range eps {
		d, had := byEndpoint[ep.ID]
		switch {
		case had && (d.Status == models.EventPending || d.Status == models.EventRetrying):
			return nil, nil, apperr.Conflict(CodeDeliveryInProgress,
				"The delivery of event %s to webhook endpoint %s is still %s; replay it once it has ended.", ev.ID, ep.ID, d.Status)
		case had:
			chosen = append(chosen, d.ID)
		case catalog.Matches(ep.EventTypes, ev.Type) && (ep.Enabled || endpointID != ""):
			fresh = append(fresh, newDelivery(ev, ep, now))
		case endpointID != "":
			return nil, nil, apperr.Invalid(ErrEndpointNotSubscribed, apperr.CodeParameterInvalid, "endpoint_id",
				"Webhook endpoint %s is not subscribed to %s events.", ep.ID, ev.Type)
		}
	}
	return chosen, fresh, nil
}

// EventsToRedispatch lists, oldest replay first, up to limit events of every environment
// replayed before `before` whose workflow has not been reached since (redispatch_at set).
// Only the sweeper calls it: like UndispatchedEvents it works for all tenants.
func (s *Store) EventsToRedispatch(ctx context.Context, before time.Time, limit int) ([]models.Event, error) {
	var events []models.Event
	err := s.db.WithContext(ctx).Where("redispatch_at IS NOT NULL AND redispatch_at < ?", before).
		Order("redispatch_at, id").Limit(limit).Find(&events).Error
	if err != nil {
		return nil, fmt.Errorf("list events to redispatch: %w", err)
	}
	return events, nil
}

// MarkRedispatched records that the event's workflow was reached (SignalWithStart) for
// the replay marked at `seen` (the redispatch_at read before signalling) and the run that
// took it: a later replay's mark is kept, so the sweeper still reaches it.
func (s *Store) MarkRedispatched(ctx context.Context, env Env, eventID string, seen time.Time, workflowID, runID string) error {
	set := map[string]any{
		"redispatch_at": gorm.Expr("CASE WHEN redispatch_at <= ? THEN NULL ELSE redispatch_at END", seen),
		"dispatched_at": gorm.Expr("COALESCE(dispatched_at, ?)", time.Now().UTC()), "workflow_id": workflowID,
	}
	if runID != "" {
		set["run_id"] = runID
	}
	return updateEvent(s.db.WithContext(ctx), env, eventID, set, "mark redispatched")
}

// deliveryQuery is the environment's deliveries matching f: status and endpoint on the
// delivery, type, object and creation range on its event.
func deliveryQuery(db *gorm.DB, env Env, f EventFilter) *gorm.DB {
	q := db.Table("webhook_deliveries d").Joins("JOIN events e ON e.id = d.event_id").
		Where("d.environment_id = ?", env.ID)
	q = whereEq(q, "d.status", f.Status, "d.endpoint_id", f.EndpointID, "e.type", f.Type, "e.object_id", f.ObjectID)
	return whereRange(q, "e.created_at", f.CreatedAfter, f.CreatedBefore)
}

// DeliveriesAfter lists up to limit deliveries matching f (deliveryQuery's rule), in
// (created_at, id) order strictly after the cursor when one is given: a bulk replay walks
// them this way, a page at a time (ReplayPage), and replays each with
// ReplayDeliveries(event, endpoint).
func (s *Store) DeliveriesAfter(ctx context.Context, env Env, f EventFilter, cursorAt *time.Time, cursorID string, limit int) ([]models.WebhookDelivery, error) {
	q := deliveryQuery(s.db.WithContext(ctx), env, f)
	if cursorAt != nil {
		q = q.Where("(d.created_at > ?) OR (d.created_at = ? AND d.id > ?)", *cursorAt, *cursorAt, cursorID)
	}
	var rows []models.WebhookDelivery
	if err := q.Select("d.*").Order("d.created_at, d.id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("deliveries to replay: %w", err)
	}
	return rows, nil
}

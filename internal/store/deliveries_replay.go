package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

func init() {
	// A replay counts itself on the delivery, so that the settling of a series of attempts
	// started before it (MarkDeliveryFailed) leaves the replayed delivery pending. A
	// constant default adds the column without rewriting the table (PostgreSQL 11+).
	register(migration{version: 69, name: "webhook_deliveries_replays", sql: `
ALTER TABLE webhook_deliveries ADD COLUMN replays INTEGER NOT NULL DEFAULT 0`})
}

// LockEvent loads the environment's event id FOR UPDATE (SQLite's single connection
// serialises instead): a replay decides under it.
func (tx *Tx) LockEvent(id string) (models.Event, error) {
	return lockRow[models.Event](tx, "event", id)
}

// ReplayEndpoints lists the environment's webhook endpoints, oldest first: only the one
// named endpointID (none when it names no endpoint here) unless endpointID is "".
func (tx *Tx) ReplayEndpoints(endpointID string) ([]models.WebhookEndpoint, error) {
	var eps []models.WebhookEndpoint
	q := scope(tx.db, tx.env).Order("created_at, id")
	if endpointID != "" {
		q = q.Where("id = ?", endpointID)
	}
	if err := q.Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("endpoints of replay: %w", err)
	}
	return eps, nil
}

// EventDeliveries lists the event's deliveries, oldest first, in the transaction.
func (tx *Tx) EventDeliveries(eventID string) ([]models.WebhookDelivery, error) {
	var ds []models.WebhookDelivery
	if err := scope(tx.db, tx.env).Where("event_id = ?", eventID).Order("created_at, id").Find(&ds).Error; err != nil {
		return nil, fmt.Errorf("deliveries of %s: %w", eventID, err)
	}
	return ds, nil
}

// EventAttempts lists the event's attempts, oldest first, in the transaction.
func (tx *Tx) EventAttempts(eventID string) ([]models.DeliveryAttempt, error) {
	var as []models.DeliveryAttempt
	if err := scope(tx.db, tx.env).Where("event_id = ?", eventID).Order("started_at, number").Find(&as).Error; err != nil {
		return nil, fmt.Errorf("attempts of %s: %w", eventID, err)
	}
	return as, nil
}

// RequeueDeliveries changes the event's deliveries ids as u says (a replay, decided by
// webhook.Transition: back to pending, each counting the replay).
func (tx *Tx) RequeueDeliveries(eventID string, ids []string, u DeliveryUpdate) error {
	if len(ids) == 0 {
		return nil
	}
	if err := u.apply(scope(tx.db, tx.env).Where("id IN ?", ids), tx.Now()).Error; err != nil {
		return fmt.Errorf("replay deliveries of %s: %w", eventID, err)
	}
	return nil
}

// AddDeliveries writes new deliveries of event eventID (a replay's, to endpoints that
// had none: webhook.NewDelivery makes them).
func (tx *Tx) AddDeliveries(eventID string, fresh []models.WebhookDelivery) error {
	if len(fresh) == 0 {
		return nil
	}
	if err := tx.db.Create(&fresh).Error; err != nil {
		return fmt.Errorf("new deliveries of %s: %w", eventID, err)
	}
	return nil
}

// SummarizeReplayed sets the event's status to the summary of its deliveries again and,
// when redispatch is set (a delivery goes again), marks it for redispatch under the
// replay's trace (traceParent): the dispatcher (after commit) or the sweeper
// (EventsToRedispatch) reaches its workflow with SignalWithStart. It returns the event
// as it is then.
func (tx *Tx) SummarizeReplayed(eventID string, redispatch bool, traceParent string) (models.Event, error) {
	set := map[string]any{"status": gorm.Expr(summarySQL), "updated_at": tx.Now()}
	if redispatch {
		set["redispatch_at"] = tx.Now()
		set["redispatch_trace_parent"] = traceParent
	}
	var ev models.Event
	if err := updateEvent(tx.db, tx.env, eventID, set, "summarize replayed"); err != nil {
		return ev, err
	}
	if err := scope(tx.db, tx.env).Where("id = ?", eventID).Take(&ev).Error; err != nil {
		return ev, fmt.Errorf("reload event %s: %w", eventID, err)
	}
	if redispatch {
		tx.handOver(ev) // reached after commit (AfterCommit), or by the sweeper
	}
	return ev, nil
}

// EventsToRedispatch lists, oldest replay first, up to limit events of every environment
// replayed before `before` whose workflow has not been reached since (redispatch_at set).
// Only the sweeper calls it: like UndispatchedEvents it works for all tenants.
func (s *Store) EventsToRedispatch(ctx context.Context, before time.Time, limit int) ([]models.Event, error) {
	return unstarted[models.Event](ctx, s.db, "list events to redispatch", "redispatch_at, id", limit,
		"redispatch_at IS NOT NULL AND redispatch_at < ?", before)
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
// them this way, a page at a time, in the page's transaction.
func (tx *Tx) DeliveriesAfter(f EventFilter, cursorAt *time.Time, cursorID string, limit int) ([]models.WebhookDelivery, error) {
	q := deliveryQuery(tx.db, tx.env, f)
	if cursorAt != nil {
		q = q.Where("(d.created_at > ?) OR (d.created_at = ? AND d.id > ?)", *cursorAt, *cursorAt, cursorID)
	}
	var rows []models.WebhookDelivery
	if err := q.Select("d.*").Order("d.created_at, d.id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("deliveries to replay: %w", err)
	}
	return rows, nil
}

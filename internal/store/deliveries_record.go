package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// RecordDeliveryAttempt writes one attempt, its delivery's status as ch says (the webhook
// domain decides it: webhook.AttemptChange) and its event's summary in the change, so
// that an attempt is never recorded without its status nor the reverse; the webhook
// domain continues with the endpoint's health (what it returns). The attempt's id is set
// by the caller before a retried write: a write whose commit succeeded but whose answer
// was lost is not recorded twice, nor does it change the status again.
//
// a.DeliveryID names the delivery; an attempt of a run of the single-endpoint releases
// has none and resolves to the event's only delivery (or that of the environment's
// oldest endpoint, the one those runs send to). An event without deliveries (old runs of
// events no endpoint took) takes ch's status itself. On PostgreSQL, an attempt naming its
// delivery is recorded in two statements (recordFanOutAttempt).
func (tx *Tx) RecordDeliveryAttempt(a *models.DeliveryAttempt, ch AttemptChange) (AttemptRecord, error) {
	stampAttempt(a, tx.env)
	now := tx.Now()
	if tx.dialect == "postgres" && a.DeliveryID != "" && ch.Delivery.recordShaped() {
		return recordFanOutAttempt(tx.db, tx.env, a, ch, now)
	}
	return recordAttemptStepByStep(tx.db, tx.dialect, tx.env, a, ch, now)
}

// recordAttemptStepByStep is RecordDeliveryAttempt one statement per step: SQLite, and
// the attempts of the single-endpoint releases, which must find their delivery first.
func recordAttemptStepByStep(tx *gorm.DB, dialect string, env Env, a *models.DeliveryAttempt, ch AttemptChange, now time.Time) (AttemptRecord, error) {
	var rec AttemptRecord
	if dialect == "postgres" && a.DeliveryID != "" {
		if err := (&Tx{db: tx, dialect: dialect, env: env}).LockDeliveryLane(a.DeliveryID); err != nil {
			return rec, err
		}
	}
	if err := lockEventRows(tx, dialect, a.EventID); err != nil {
		return rec, err
	}
	var types []string
	if err := tx.Model(&models.Event{}).Where("id = ?", a.EventID).Pluck("type", &types).Error; err != nil {
		return rec, fmt.Errorf("event %s: %w", a.EventID, err)
	}
	if len(types) > 0 {
		rec.EventType = types[0]
	}
	d, found, err := attemptDelivery(tx, env, a)
	if err != nil {
		return rec, err
	}
	if found {
		a.DeliveryID, a.EndpointID = d.ID, d.EndpointID
		rec.EndpointID, rec.MaxAttempts = d.EndpointID, d.MaximumAttempts
		rec.Ordered, rec.ObjectID = d.Ordered, d.ObjectID
	}
	ins := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(a)
	if ins.Error != nil {
		return rec, fmt.Errorf("record delivery attempt of %s: %w", a.EventID, ins.Error)
	}
	if ins.RowsAffected == 0 {
		// Stored by an earlier write of this attempt, which set the status then; a
		// replay may have put the delivery back to pending since.
		return rec, nil
	}
	rec.Written = true
	if err := addAttemptStat(tx, env, a); err != nil {
		return rec, err
	}
	if !found {
		return rec, setEventStatus(tx, env, a.EventID, ch.Delivery.Status, now)
	}
	if res := ch.Delivery.apply(scope(tx, env).Where("id = ?", d.ID), now); res.Error != nil {
		return rec, fmt.Errorf("set status of delivery %s: %w", d.ID, res.Error)
	}
	if rec.Health, rec.HealthFound, err = touchHealth(tx, a, ch.CountsForHealth); err != nil {
		return rec, err
	}
	return rec, summarizeEvent(tx, a.EventID, now)
}

// stampAttempt gives an attempt about to be written its environment, and an id and a
// creation time unless it has them (a retried write keeps the id of its first try).
func stampAttempt(a *models.DeliveryAttempt, env Env) {
	if a.ID == "" {
		a.ID = uuid.NewString()
	}
	a.EnvironmentID = env.ID
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now().UTC()
	}
}

// attemptDelivery is the delivery an attempt belongs to (found false: the event has none).
func attemptDelivery(tx *gorm.DB, env Env, a *models.DeliveryAttempt) (models.WebhookDelivery, bool, error) {
	var ds []models.WebhookDelivery
	q := scope(tx, env).Where("event_id = ?", a.EventID)
	if a.DeliveryID != "" {
		q = q.Where("id = ?", a.DeliveryID)
	}
	if err := q.Order("created_at, id").Find(&ds).Error; err != nil {
		return models.WebhookDelivery{}, false, fmt.Errorf("delivery of attempt %s: %w", a.ID, err)
	}
	switch {
	case len(ds) == 0 && a.DeliveryID != "":
		return models.WebhookDelivery{}, false, fmt.Errorf("delivery %s: %w", a.DeliveryID, apperr.ErrNotFound)
	case len(ds) == 0:
		return models.WebhookDelivery{}, false, nil
	case len(ds) == 1:
		return ds[0], true, nil
	}
	oldest, err := oldestEndpoint(scope(tx, env))
	if err == nil {
		for _, d := range ds {
			if d.EndpointID == oldest.ID {
				return d, true, nil
			}
		}
	} else if !isNotFound(err) {
		return models.WebhookDelivery{}, false, err
	}
	return ds[0], true, nil
}

// setEventStatus writes an event's own status (SetEventStatus, and the single-endpoint
// releases for events without deliveries).
func setEventStatus(tx *gorm.DB, env Env, eventID, status string, now time.Time) error {
	return updateEvent(tx, env, eventID, map[string]any{"status": status, "updated_at": now}, "set status of")
}

// DeliveryEnv is the environment of a delivery named by id alone: the id comes from the
// workflow input, as for EventByID. One read, of the delivery and its event.
func (s *Store) DeliveryEnv(ctx context.Context, deliveryID string) (Env, error) {
	var rows []struct{ OrganizationID, EnvironmentID, Environment string }
	err := s.db.WithContext(ctx).Table("webhook_deliveries AS d").
		Select("e.organization_id, e.environment_id, e.environment").
		Joins("JOIN events e ON e.id = d.event_id").Where("d.id = ?", deliveryID).Limit(1).Scan(&rows).Error
	if err != nil {
		return Env{}, fmt.Errorf("delivery %s: %w", deliveryID, err)
	}
	if len(rows) == 0 {
		return Env{}, fmt.Errorf("delivery %s: %w", deliveryID, apperr.ErrNotFound)
	}
	r := rows[0]
	return Env{OrganizationID: r.OrganizationID, ID: r.EnvironmentID, Name: r.Environment}, nil
}

// EndDelivery changes delivery deliveryID as u says (a failure marked, an ending by
// disabling: webhook.Transition decides it), summarises its event, and returns the
// delivery as it is then, and whether this call changed it (moved: a retried call finds
// it changed already). Its event is locked first, as for every change of a delivery
// (lockEvents).
func (tx *Tx) EndDelivery(deliveryID string, u DeliveryUpdate) (d models.WebhookDelivery, moved bool, err error) {
	if err := scope(tx.db, tx.env).Where("id = ?", deliveryID).Take(&d).Error; err != nil {
		return d, false, notFound(err, "delivery "+deliveryID)
	}
	if err := lockEventRows(tx.db, tx.dialect, d.EventID); err != nil {
		return d, false, err
	}
	now := tx.Now()
	res := u.apply(scope(tx.db, tx.env).Where("id = ?", d.ID), now)
	if res.Error != nil {
		return d, false, fmt.Errorf("change delivery %s: %w", d.ID, res.Error)
	}
	if err := summarizeEvent(tx.db, d.EventID, now); err != nil {
		return d, false, err
	}
	if err := scope(tx.db, tx.env).Where("id = ?", d.ID).Take(&d).Error; err != nil {
		return d, false, fmt.Errorf("reload delivery %s: %w", d.ID, err)
	}
	return d, res.RowsAffected == 1, nil
}

// EndEventDeliveries changes every delivery of event eventID as u says (the
// single-endpoint releases' runs settle their event as a whole) and summarises the
// event, or, when it has no delivery, sets the event's own status to u's if it is one of
// u.From.
func (tx *Tx) EndEventDeliveries(eventID string, u DeliveryUpdate) error {
	if err := lockEventRows(tx.db, tx.dialect, eventID); err != nil {
		return err
	}
	var n int64
	if err := scope(tx.db.Model(&models.WebhookDelivery{}), tx.env).Where("event_id = ?", eventID).Count(&n).Error; err != nil {
		return fmt.Errorf("deliveries of %s: %w", eventID, err)
	}
	now := tx.Now()
	if n == 0 {
		q := scope(tx.db.Model(&models.Event{}), tx.env).Where("id = ?", eventID)
		if u.From != nil {
			q = q.Where("status IN ?", u.From)
		}
		return q.Updates(map[string]any{"status": u.Status, "updated_at": now}).Error
	}
	if err := u.apply(scope(tx.db, tx.env).Where("event_id = ?", eventID), now).Error; err != nil {
		return fmt.Errorf("change deliveries of %s: %w", eventID, err)
	}
	return summarizeEvent(tx.db, eventID, now)
}

// LockDeliveryEndpoint locks the endpoint of delivery deliveryID, if both are there,
// before the change locks the delivery's event: a change that may lock the endpoint
// (MarkDeliveryFailed's disabling) takes it first, as the endpoint writes and its
// deletion do, so that no change holds an event while it waits for an endpoint
// (CONTRACT §23's lock order: endpoint, event, health row).
func (tx *Tx) LockDeliveryEndpoint(deliveryID string) error {
	if tx.dialect != "postgres" {
		return nil // SQLite's write transaction is exclusive
	}
	var ids []string
	if err := tx.db.Raw(`SELECT e.id FROM webhook_endpoints e
	WHERE e.id = (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.id = ? AND d.environment_id = ?)
	AND e.environment_id = ? FOR UPDATE OF e`, deliveryID, tx.env.ID, tx.env.ID).Scan(&ids).Error; err != nil {
		return fmt.Errorf("endpoint of delivery %s: %w", deliveryID, err)
	}
	return nil
}

// LockEnabledEndpoint loads endpoint id for update if it is enabled (found false: it was
// deleted or is disabled).
func (tx *Tx) LockEnabledEndpoint(id string) (ep models.WebhookEndpoint, found bool, err error) {
	var eps []models.WebhookEndpoint
	if err := scope(tx.db, tx.env).Clauses(clause.Locking{Strength: "UPDATE"}).
		Where("id = ? AND enabled = ?", id, true).Find(&eps).Error; err != nil {
		return ep, false, fmt.Errorf("endpoint %s: %w", id, err)
	}
	if len(eps) == 0 {
		return ep, false, nil
	}
	return eps[0], true, nil
}

// LastAttemptAt is the start of the endpoint's latest attempt with outcome (nil: none).
func (tx *Tx) LastAttemptAt(endpointID, outcome string) (*time.Time, error) {
	return attemptAt(tx.db, tx.env, endpointID, outcome, "started_at DESC", nil)
}

// FirstAttemptAfter is the start of the endpoint's first attempt with outcome strictly
// after `after` when set (nil: none).
func (tx *Tx) FirstAttemptAfter(endpointID, outcome string, after *time.Time) (*time.Time, error) {
	return attemptAt(tx.db, tx.env, endpointID, outcome, "started_at", after)
}

// attemptAt is the start of the endpoint's first attempt with outcome in the given
// order, strictly after `after` when set (nil: there is none).
func attemptAt(tx *gorm.DB, env Env, endpointID, outcome, order string, after *time.Time) (*time.Time, error) {
	q := scope(tx.Model(&models.DeliveryAttempt{}), env).Where("endpoint_id = ? AND outcome = ?", endpointID, outcome)
	if after != nil {
		q = q.Where("started_at > ?", *after)
	}
	var at []time.Time
	if err := q.Order(order).Limit(1).Pluck("started_at", &at).Error; err != nil {
		return nil, fmt.Errorf("%s attempts of endpoint %s: %w", outcome, endpointID, err)
	}
	if len(at) == 0 {
		return nil, nil
	}
	return &at[0], nil
}

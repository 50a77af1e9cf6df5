package store

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/domain/catalog"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/models"
)

// RecordDeliveryAttempt writes one attempt, its delivery's resulting status and its
// event's summary in one transaction, so that an attempt is never recorded without its
// status nor the reverse. The attempt's id is set by the caller before a retried write:
// a write whose commit succeeded but whose answer was lost is not recorded twice.
//
// a.DeliveryID names the delivery; an attempt of a run of the single-endpoint releases
// has none and resolves to the event's only delivery (or that of the environment's
// oldest endpoint, the one those runs send to). A delivery already ended skipped by the
// deletion of its endpoint keeps that status. An event without deliveries (old runs of
// events no endpoint took) takes the status as given.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, env Env, a *models.DeliveryAttempt, deliveryStatus string) error {
	stampAttempt(a, env)
	now := time.Now().UTC()
	if s.dialect == "postgres" && a.DeliveryID != "" {
		return s.recordFanOutAttempt(ctx, env, a, deliveryStatus, now)
	}
	return s.recordAttemptStepByStep(ctx, env, a, deliveryStatus, now)
}

// recordAttemptStepByStep is RecordDeliveryAttempt one statement per step: SQLite, and
// the attempts of the single-endpoint releases, which must find their delivery first.
func (s *Store) recordAttemptStepByStep(ctx context.Context, env Env, a *models.DeliveryAttempt, deliveryStatus string, now time.Time) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockEvents(tx, a.EventID); err != nil {
			return err
		}
		d, found, err := attemptDelivery(tx, env, a)
		if err != nil {
			return err
		}
		if found {
			a.DeliveryID, a.EndpointID = d.ID, d.EndpointID
		}
		ins := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(a)
		if ins.Error != nil {
			return fmt.Errorf("record delivery attempt of %s: %w", a.EventID, ins.Error)
		}
		if ins.RowsAffected == 0 {
			// Stored by an earlier write of this attempt, which set the status then; a
			// replay may have put the delivery back to pending since.
			return nil
		}
		if !found {
			return setEventStatus(tx, env, a.EventID, deliveryStatus, now)
		}
		res := scope(tx.Model(&models.WebhookDelivery{}), env).
			Where("id = ? AND NOT (status = ? AND last_error = ?)", d.ID, models.EventSkipped, models.DeliveryEndpointDeleted).
			Updates(map[string]any{"status": deliveryStatus, "last_error": attemptLastError(a), "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("set status of delivery %s: %w", d.ID, res.Error)
		}
		return summarizeEvent(tx, a.EventID, now)
	})
}

// attemptLastError is the delivery's last_error after the attempt: its error when it
// failed or was skipped, none once it succeeded.
func attemptLastError(a *models.DeliveryAttempt) string {
	if a.Outcome == models.AttemptFailed || a.Outcome == models.AttemptSkipped {
		return a.Error
	}
	return ""
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

// MarkDeliveryFailed ends a delivery failed if it is still under way (pending or
// retrying), with reason as its error when one is given (endpoint_disabled), and
// summarises its event. The workflow calls it whenever a delivery's activity series ends
// without delivery, even when the last attempt recorded failed itself: the call then
// only evaluates automatic disabling (CONTRACT §13). If the endpoint's first failed
// attempt since its last success (or its last re-enabling) is older than disableAfter
// (0: never), the endpoint is disabled (failing) and an endpoint-disabled event is
// written in the same transaction; disabled tells so (for the metric). The id comes from
// the workflow input, as for EventByID.
//
// replays is the delivery's replay count as the series being settled read it when it
// began (nil: a run of an earlier release, which did not read it). A delivery replayed
// since (a higher count) is left pending: its replay is for a new series, which the run
// starts once this one has settled; ending it failed would lose the replay.
func (s *Store) MarkDeliveryFailed(ctx context.Context, deliveryID, reason string, replays *int, disableAfter time.Duration) (disabled bool, err error) {
	now := time.Now().UTC()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var d models.WebhookDelivery
		if err := tx.Where("id = ?", deliveryID).Take(&d).Error; err != nil {
			return notFound(err, "delivery "+deliveryID)
		}
		var ev models.Event
		if err := tx.Where("id = ?", d.EventID).Take(&ev).Error; err != nil {
			return notFound(err, "event "+d.EventID)
		}
		env := EnvOf(ev)
		if err := s.lockEvents(tx, ev.ID); err != nil {
			return err
		}
		set := map[string]any{"status": models.EventFailed, "updated_at": now}
		if reason != "" {
			set["last_error"] = reason
		}
		q := scope(tx.Model(&models.WebhookDelivery{}), env).Where("id = ? AND status IN ?", d.ID, unfinishedStatuses)
		if replays != nil {
			q = q.Where("replays = ?", *replays)
		}
		res := q.Updates(set)
		if res.Error != nil {
			return fmt.Errorf("mark delivery %s failed: %w", d.ID, res.Error)
		}
		if err := summarizeEvent(tx, ev.ID, now); err != nil {
			return err
		}
		if err := scope(tx, env).Where("id = ?", d.ID).Take(&d).Error; err != nil {
			return fmt.Errorf("reload delivery %s: %w", d.ID, err)
		}
		if d.Status != models.EventFailed {
			return nil // delivered, skipped or replayed meanwhile: nothing failed
		}
		disabled, err = s.autoDisable(tx, env, d.EndpointID, disableAfter, now)
		return err
	})
	return disabled, err
}

// MarkEventFailed is the single-endpoint releases' MarkDeliveryFailed: it ends the
// event's unfinished deliveries failed (or, without deliveries, the event itself).
func (s *Store) MarkEventFailed(ctx context.Context, eventID string) error {
	now := time.Now().UTC()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockEvents(tx, eventID); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.WebhookDelivery{}).Where("event_id = ?", eventID).Count(&n).Error; err != nil {
			return fmt.Errorf("deliveries of %s: %w", eventID, err)
		}
		failed := map[string]any{"status": models.EventFailed, "updated_at": now}
		if n == 0 {
			return tx.Model(&models.Event{}).Where("id = ? AND status IN ?", eventID, unfinishedStatuses).
				Updates(failed).Error
		}
		if err := tx.Model(&models.WebhookDelivery{}).Where("event_id = ? AND status IN ?", eventID, unfinishedStatuses).
			Updates(failed).Error; err != nil {
			return fmt.Errorf("mark deliveries of %s failed: %w", eventID, err)
		}
		return summarizeEvent(tx, eventID, now)
	})
}

// autoDisable disables an enabled endpoint whose failures have lasted disableAfter.
func (s *Store) autoDisable(tx *gorm.DB, env Env, endpointID string, disableAfter time.Duration, now time.Time) (bool, error) {
	if disableAfter <= 0 {
		return false, nil
	}
	var eps []models.WebhookEndpoint
	if err := s.forUpdate(scope(tx, env)).Where("id = ? AND enabled = ?", endpointID, true).Find(&eps).Error; err != nil {
		return false, fmt.Errorf("endpoint %s: %w", endpointID, err)
	}
	if len(eps) == 0 {
		return false, nil // deleted or disabled already
	}
	ep := eps[0]
	since, err := lastAttemptAt(tx, env, endpointID, models.AttemptSucceeded, "started_at DESC", nil)
	if err != nil {
		return false, err
	}
	if ep.EnabledAt != nil && (since == nil || ep.EnabledAt.After(*since)) {
		since = ep.EnabledAt
	}
	firstFail, err := lastAttemptAt(tx, env, endpointID, models.AttemptFailed, "started_at", since)
	if err != nil || firstFail == nil || now.Sub(*firstFail) < disableAfter {
		return false, err
	}
	res := scope(tx.Model(&models.WebhookEndpoint{}), env).Where("id = ?", endpointID).Updates(map[string]any{
		"enabled": false, "disabled_reason": models.DisabledFailing, "failing_since": *firstFail, "updated_at": now,
	})
	if res.Error != nil {
		return false, fmt.Errorf("disable endpoint %s: %w", endpointID, res.Error)
	}
	ep.Enabled, ep.DisabledReason, ep.FailingSince = false, models.DisabledFailing, firstFail
	if _, err := writeEvents(tx, env, changeTime(), []Emit{endpointDisabledEmit(ep)}, tracing.TraceParent(tx.Statement.Context)); err != nil {
		return false, fmt.Errorf("endpoint-disabled event of %s: %w", endpointID, err)
	}
	return true, nil
}

// lastAttemptAt is the start of the endpoint's first attempt with outcome in the given
// order, strictly after `after` when set (nil: there is none).
func lastAttemptAt(tx *gorm.DB, env Env, endpointID, outcome, order string, after *time.Time) (*time.Time, error) {
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

// endpointDisabledEmit is the endpoint-disabled event of an endpoint: the URL's host
// only, never the URL (its path and query may hold tokens, its user information a password).
func endpointDisabledEmit(ep models.WebhookEndpoint) Emit {
	body := catalog.DisabledEndpoint{ID: ep.ID, DisabledReason: ep.DisabledReason}
	if ep.Description != "" {
		body.Description = &ep.Description
	}
	if u, err := url.Parse(ep.URL); err == nil {
		body.Host = u.Host // host[:port], without user information
	}
	if ep.FailingSince != nil {
		body.FailingSince = ep.FailingSince.UTC().Format(time.RFC3339)
	}
	return Emit{Type: catalog.EndpointDisabled, ObjectType: "webhook_endpoint", ObjectID: ep.ID, Object: body}
}

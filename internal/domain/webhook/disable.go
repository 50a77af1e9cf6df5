package webhook

import (
	"context"
	"net/url"
	"time"

	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Automatic disabling (CONTRACT §13): an endpoint whose attempts have all failed for
// disableAfter — from its first failed attempt since its last success, or since it was
// last enabled — is disabled (failing) when one of its deliveries ends failed, and an
// endpoint-disabled event says so. An endpoint whose receiver answered 410 Gone is
// disabled (gone) at once, when the delivery that got it ends failed (CONTRACT §23).

// FailureStore is what MarkDeliveryFailed needs of the database.
type FailureStore interface {
	Writer
	DeliveryEnv(ctx context.Context, deliveryID string) (models.Env, error)
}

var _ FailureStore = (*store.Store)(nil)

// MarkDeliveryFailed ends the delivery failed if it is still under way (Transition:
// FailureMarked, or EndedByDisabling for reason endpoint_disabled; replays is the
// replay count its series read, reason its error when its last attempt could not say it)
// and, when it did end failed, judges the automatic disabling of its endpoint in the same
// transaction (disableAfter 0: never); disabled tells whether the endpoint was disabled
// (for the metric). The workflow calls it whenever a delivery's activity series ends
// without delivery, even when the last attempt recorded failed itself: the call then
// only judges disabling.
func MarkDeliveryFailed(ctx context.Context, st FailureStore, deliveryID, reason string, replays *int, disableAfter time.Duration) (disabled bool, err error) {
	env, err := st.DeliveryEnv(ctx, deliveryID)
	if err != nil {
		return false, err
	}
	evs, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		// The endpoint before the event (the one lock order, CONTRACT §23): the disabling
		// below locks it after the event otherwise.
		if err := tx.LockDeliveryEndpoint(deliveryID); err != nil {
			return err
		}
		if err := tx.LockDeliveryLane(deliveryID); err != nil { // the lane before the event (CONTRACT §26)
			return err
		}
		d, moved, err := tx.EndDelivery(deliveryID, Transition(failureMarked(reason, replays)))
		if err != nil {
			return err
		}
		if disabled, err = judgeFailure(tx, d, moved, reason, disableAfter); err != nil {
			return err
		}
		// After the disabling: a disabled endpoint releases nothing (CONTRACT §26).
		return releaseAfter(tx, d.Ordered, d.EndpointID, d.ObjectID, d.Status)
	})
	countHealthEvents(evs)
	return disabled, err
}

// judgeFailure is what a delivery's failure marked changes besides its status: a gone
// ending disables the endpoint (announced as endpoint-disabled, never
// delivery-exhausted); a failure judges the automatic disabling and, when this call
// ended it (moved), announces delivery-exhausted.
func judgeFailure(tx *store.Tx, d models.WebhookDelivery, moved bool, reason string, disableAfter time.Duration) (disabled bool, err error) {
	if d.Status == models.EventFailed && d.LastError == models.DeliveryGone {
		return disableGone(tx, d) // a gone ending is announced as endpoint-disabled, never delivery-exhausted
	}
	if d.Status != models.EventFailed {
		return false, nil // delivered, skipped or replayed meanwhile: nothing failed
	}
	if disableAfter > 0 {
		if disabled, err = disableIfFailing(tx, d.EndpointID, disableAfter); err != nil {
			return false, err
		}
	}
	if !moved {
		return disabled, nil // ended by its last attempt's record, or by an earlier try of this call
	}
	return disabled, exhaustOnMark(tx, d, reason) // after the endpoint's lock: the health row's
}

// failureMarked is the change of a delivery whose series ended without delivery, for
// reason ("" keeps the last attempt's error).
func failureMarked(reason string, replays *int) StatusChange {
	if reason == models.DeliveryEndpointDisabled {
		return StatusChange{Change: EndedByDisabling, Replays: replays}
	}
	return StatusChange{Change: FailureMarked, Error: reason, Replays: replays}
}

// EventStore is what settling an event of the single-endpoint releases needs of the
// database.
type EventStore interface {
	Writer
	EventByID(ctx context.Context, id string) (models.Event, models.Env, error)
}

var _ EventStore = (*store.Store)(nil)

// MarkEventFailed is MarkDeliveryFailed for a run of the single-endpoint releases, which
// names no delivery: it ends the event's unfinished deliveries failed, those of deleted
// endpoints skipped (Transition: EventFailureMarked), or, without deliveries, the event
// itself failed. It judges no disabling, as those releases did not.
func MarkEventFailed(ctx context.Context, st EventStore, eventID string) error {
	_, env, err := st.EventByID(ctx, eventID)
	if isNotFound(err) {
		return nil // purged meanwhile: nothing is left to settle
	}
	if err != nil {
		return err
	}
	_, err = st.InTx(ctx, env, func(tx *store.Tx) error {
		return tx.EndEventDeliveries(eventID, Transition(StatusChange{Change: EventFailureMarked}))
	})
	return err
}

// disableIfFailing disables the endpoint, if it is enabled, when its failures have
// lasted disableAfter, and emits endpoint-disabled.
func disableIfFailing(tx *store.Tx, endpointID string, disableAfter time.Duration) (bool, error) {
	ep, enabled, err := tx.LockEnabledEndpoint(endpointID)
	if err != nil || !enabled {
		return false, err // deleted or disabled already
	}
	since, err := tx.LastAttemptAt(endpointID, models.AttemptSucceeded)
	if err != nil {
		return false, err
	}
	if ep.EnabledAt != nil && (since == nil || ep.EnabledAt.After(*since)) {
		since = ep.EnabledAt
	}
	firstFail, err := tx.FirstAttemptAfter(endpointID, models.AttemptFailed, since)
	if err != nil || firstFail == nil || tx.Now().Sub(*firstFail) < disableAfter {
		return false, err
	}
	ep.Enabled, ep.DisabledReason, ep.FailingSince, ep.UpdatedAt = false, models.DisabledFailing, firstFail, tx.Now()
	if err := tx.SaveEndpoint(&ep); err != nil {
		return false, err
	}
	tx.Emit(disabledEmit(ep))
	return true, nil
}

// disableGone disables the endpoint whose receiver answered the delivery 410 Gone
// (CONTRACT §23: at once, whatever disableAfter), and emits endpoint-disabled. Only an
// endpoint still enabled, and not re-enabled since the delivery ended: a retried call, or
// one after the integrator turned the endpoint back on, changes nothing.
func disableGone(tx *store.Tx, d models.WebhookDelivery) (bool, error) {
	ep, enabled, err := tx.LockEnabledEndpoint(d.EndpointID)
	if err != nil || !enabled || (ep.EnabledAt != nil && ep.EnabledAt.After(d.UpdatedAt)) {
		return false, err
	}
	// failing_since as for failing: the first failed attempt since the last success (or
	// re-enabling); the 410 itself when it was the first.
	since, err := tx.LastAttemptAt(ep.ID, models.AttemptSucceeded)
	if err != nil {
		return false, err
	}
	if ep.EnabledAt != nil && (since == nil || ep.EnabledAt.After(*since)) {
		since = ep.EnabledAt
	}
	firstFail, err := tx.FirstAttemptAfter(ep.ID, models.AttemptFailed, since)
	if err != nil {
		return false, err
	}
	if firstFail == nil {
		now := tx.Now()
		firstFail = &now
	}
	ep.Enabled, ep.DisabledReason, ep.FailingSince, ep.UpdatedAt = false, models.DisabledGone, firstFail, tx.Now()
	if err := tx.SaveEndpoint(&ep); err != nil {
		return false, err
	}
	tx.Emit(disabledEmit(ep))
	return true, nil
}

// disabledEmit is the endpoint-disabled event of an endpoint: the URL's host only, never
// the URL (its path and query may hold tokens, its user information a password).
func disabledEmit(ep models.WebhookEndpoint) store.Emit {
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
	return store.Emit{Type: catalog.EndpointDisabled, ObjectType: "webhook_endpoint", ObjectID: ep.ID, Object: body}
}

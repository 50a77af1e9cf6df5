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

// MarkDeliveryFailed ends the delivery failed if it is still under way (see
// store.Tx.MarkDeliveryFailed for replays and reason) and, when it did end failed,
// judges the automatic disabling of its endpoint in the same transaction (disableAfter
// 0: never); disabled tells whether the endpoint was disabled (for the metric). The
// workflow calls it whenever a delivery's activity series ends without delivery, even
// when the last attempt recorded failed itself: the call then only judges disabling.
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
		d, moved, err := tx.EndDeliveryFailed(deliveryID, reason, replays)
		if err != nil {
			return err
		}
		if d.Status == models.EventFailed && d.LastError == models.DeliveryGone {
			disabled, err = disableGone(tx, d)
			return err // a gone ending is announced as endpoint-disabled, never delivery-exhausted
		}
		if d.Status != models.EventFailed {
			return nil // delivered, skipped or replayed meanwhile: nothing failed
		}
		if disableAfter > 0 {
			if disabled, err = disableIfFailing(tx, d.EndpointID, disableAfter); err != nil {
				return err
			}
		}
		if !moved {
			return nil // ended by its last attempt's record, or by an earlier try of this call
		}
		return exhaustOnMark(tx, d, reason) // after the endpoint's lock: the health row's
	})
	countHealthEvents(evs)
	return disabled, err
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

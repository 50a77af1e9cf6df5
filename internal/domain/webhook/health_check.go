package webhook

import (
	"context"
	"time"

	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// HealthCheckStore is what the minute health check needs of the database.
type HealthCheckStore interface {
	Writer
	HealthDue(ctx context.Context, now, failingBefore time.Time, limit int) ([]store.HealthDue, error)
	PurgeOrphanHealth(ctx context.Context, limit int) (int64, error)
}

var _ HealthCheckStore = (*store.Store)(nil)

// HealthChecked counts what one pass of the check did.
type HealthChecked struct {
	Endpoints int   // endpoints looked at (at most the pass's limit)
	Purged    int64 // health rows of deleted endpoints removed
}

// CheckHealth is one bounded pass of the system check every minute (CONTRACT §23, §21):
// it announces the failing spells that have lasted failingAfter without an attempt
// since to judge them, and emits the delivery-exhausted summaries whose minute has
// ended; at most limit endpoints, each in its own short transaction.
func CheckHealth(ctx context.Context, st HealthCheckStore, now time.Time, failingAfter time.Duration, limit int) (HealthChecked, error) {
	var out HealthChecked
	due, err := st.HealthDue(ctx, now, now.Add(-failingAfter), limit)
	if err != nil {
		return out, err
	}
	for _, d := range due {
		if err := checkEndpoint(ctx, st, d, now, failingAfter); err != nil {
			return out, err
		}
		out.Endpoints++
	}
	out.Purged, err = st.PurgeOrphanHealth(ctx, limit)
	return out, err
}

// checkEndpoint judges one endpoint's row again under its lock.
func checkEndpoint(ctx context.Context, st Writer, d store.HealthDue, now time.Time, failingAfter time.Duration) error {
	evs, err := st.InTx(ctx, d.Env, func(tx *store.Tx) error {
		h, found, err := tx.LockHealth(d.EndpointID)
		if err != nil || !found {
			return err
		}
		if _, err := tx.Endpoint(d.EndpointID); isNotFound(err) {
			return tx.DeleteHealth(d.EndpointID) // deleted: nothing to announce
		}
		endSpellSucceededSince(&h)
		if err := announceFailing(tx, &h, now, failingAfter); err != nil {
			return err
		}
		if h.ExhaustedUntil != nil && !now.Before(*h.ExhaustedUntil) && h.ExhaustedSuppressed > 0 {
			if err := summarizeExhausted(tx, &h, now); err != nil {
				return err
			}
		}
		return tx.SaveHealth(&h)
	})
	countHealthEvents(evs)
	return err
}

// summarizeExhausted emits the summary of a minute's held-back deliveries: the latest
// of them in "delivery", how many in "suppressed".
func summarizeExhausted(tx *store.Tx, h *models.EndpointHealth, now time.Time) error {
	o, found, err := tx.DeliveryOutline(h.ExhaustedDeliveryID)
	if err != nil {
		return err
	}
	d := catalog.ExhaustedDelivery{ID: h.ExhaustedDeliveryID}
	if found {
		d = catalog.ExhaustedDelivery{ID: o.ID, EventID: o.EventID, EventType: o.EventType, Attempts: o.Attempts, LastError: o.LastError}
	}
	return emitExhausted(tx, h, d, h.ExhaustedSuppressed, now)
}

// exhaustOnMark is the delivery-exhausted judgement of MarkDeliveryFailed when it is the
// one that ended the delivery failed (the record of its last attempt did not): after the
// event and the endpoint it locked, the health row.
func exhaustOnMark(tx *store.Tx, d models.WebhookDelivery, reason string) error {
	if reason != "" || !exhaustible(d.LastError) {
		return nil
	}
	o, found, err := tx.DeliveryOutline(d.ID)
	if err != nil || !found || catalog.Operational(o.EventType) {
		return err
	}
	h, found, err := tx.LockHealth(d.EndpointID)
	if err != nil || !found {
		return err
	}
	ed := catalog.ExhaustedDelivery{ID: o.ID, EventID: o.EventID, EventType: o.EventType, Attempts: o.Attempts, LastError: o.LastError}
	if err := exhaust(tx, &h, ed, tx.Now()); err != nil {
		return err
	}
	return tx.SaveHealth(&h)
}

// reenabled is the health of an endpoint enabled again by hand: its spell is over (the
// failures before do not count), and its next success announces its recovery.
func reenabled(tx *store.Tx, ep models.WebhookEndpoint) error {
	h, found, err := tx.LockHealth(ep.ID)
	if err != nil || !found {
		return err
	}
	from := h.FailingSince
	if from == nil {
		from = ep.FailingSince
	}
	h.RecoveryPending, h.RecoveryFrom = true, from
	h.FailingSince, h.SpellFailedAt, h.TurnedFailing, h.FailingAnnounced = nil, nil, false, false
	return tx.SaveHealth(&h)
}

package webhook

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Endpoint health (CONTRACT §23). The store keeps the facts (store.AttemptRecord, the
// health row); here is decided what they mean — an endpoint's status, when it turns
// failing, recovers or exhausts a delivery — and the operational event is emitted in the
// transaction that changes the row: exactly once, never lost. Attempts of operational
// deliveries count toward health but never cause an operational event themselves.

// DefaultFailingAfter is how long an endpoint's attempts must have failed before it is
// failing (REVOPS_WEBHOOK_FAILING_AFTER).
const DefaultFailingAfter = 15 * time.Minute

// ExhaustedWindow is the delivery-exhausted minute: one event at once, the others ending
// within it summed into one at its end.
const ExhaustedWindow = time.Minute

// idleAfter: an endpoint without an attempt for this long is idle.
const idleAfter = 24 * time.Hour

// HealthStatus is the endpoint's status at now: disabled, failing (its spell turned
// failing: it had lasted REVOPS_WEBHOOK_FAILING_AFTER when an attempt's record or the
// minute check judged it), idle (no attempt in 24 h, or never), else healthy.
func HealthStatus(ep models.WebhookEndpoint, h models.EndpointHealth, now time.Time) string {
	switch {
	case !ep.Enabled:
		return models.HealthDisabled
	case h.FailingSince != nil && h.TurnedFailing:
		return models.HealthFailing
	case h.LastAttemptAt == nil || now.Sub(*h.LastAttemptAt) >= idleAfter:
		return models.HealthIdle
	}
	return models.HealthHealthy
}

// RecordAttempt writes an attempt and its delivery's status as AttemptChange decides it
// (store.Tx.RecordDeliveryAttempt) and, in the same transaction, carries its endpoint's
// health forward. On the common
// path — a success of a healthy endpoint — the record's own statements are all: the
// health row is locked and changed only when the snapshot the record read shows a
// transition to make.
func RecordAttempt(ctx context.Context, st Writer, env models.Env, a *models.DeliveryAttempt, status string, failingAfter time.Duration) error {
	evs, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		rec, err := tx.RecordDeliveryAttempt(a, AttemptChange(a, status))
		if err != nil || !rec.Written || rec.EndpointID == "" {
			return err
		}
		if !rec.HealthFound {
			// An endpoint without a health row (created by an earlier release during a
			// rolling upgrade): adopted here, its first attempt judged from a blank row.
			if err := tx.AdoptHealth(rec.EndpointID); err != nil {
				return err
			}
			rec.Health = models.EndpointHealth{EndpointID: rec.EndpointID, EnvironmentID: env.ID}
		}
		if err := judgeAttempt(tx, rec, a, status, failingAfter); err != nil {
			return err
		}
		// After the judgement, which may disable the endpoint: a disabled one releases
		// nothing (CONTRACT §26). The record took the lane's lock first.
		return releaseAfter(tx, rec.Ordered, rec.EndpointID, rec.ObjectID, status)
	})
	countHealthEvents(evs)
	return err
}

// countHealthEvents feeds the metric of the health events a committed change wrote (by
// type only: no endpoint or tenant label, CONTRACT §23).
func countHealthEvents(evs []models.Event) {
	for _, ev := range evs {
		switch ev.Type {
		case catalog.EndpointFailing, catalog.EndpointRecovered, catalog.DeliveryExhausted:
			metrics.OperationalEvent(ev.Type)
		}
	}
}

// Recorder writes attempts' records with their endpoints' health (RecordAttempt): what
// the delivery activity records through.
type Recorder struct {
	Store        Writer
	FailingAfter time.Duration // REVOPS_WEBHOOK_FAILING_AFTER; 0: DefaultFailingAfter
}

// RecordAttempt is RecordAttempt with the recorder's store and setting.
func (r Recorder) RecordAttempt(ctx context.Context, env models.Env, a *models.DeliveryAttempt, status string) error {
	failingAfter := r.FailingAfter
	if failingAfter <= 0 {
		failingAfter = DefaultFailingAfter
	}
	return RecordAttempt(ctx, r.Store, env, a, status, failingAfter)
}

// attemptTurn is what one attempt may change.
type attemptTurn struct {
	succeeded, failed, operational, exhausted bool
	at                                        time.Time
}

func turnOf(rec store.AttemptRecord, a *models.DeliveryAttempt, status string) attemptTurn {
	t := attemptTurn{
		succeeded: a.Outcome == models.AttemptSucceeded, failed: a.Outcome == models.AttemptFailed,
		operational: catalog.Operational(rec.EventType), at: a.StartedAt.UTC(),
	}
	maxAttempts := rec.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = models.DefaultRetryPolicy.MaximumAttempts
	}
	t.exhausted = t.failed && status == models.EventFailed && a.Number >= maxAttempts && exhaustible(a.Error) && !t.operational
	return t
}

// exhaustible: a delivery ending failed with this error used its attempts up (not a
// receiver's 410 Gone, nor an endpoint disabled or deleted under it).
func exhaustible(lastError string) bool {
	switch lastError {
	case models.DeliveryGone, models.DeliveryEndpointDisabled, models.DeliveryEndpointDeleted:
		return false
	}
	return true
}

// needsJudging tells from the record's snapshot of the row whether the attempt may
// change anything but the row's times.
func needsJudging(h models.EndpointHealth, t attemptTurn, now time.Time, failingAfter time.Duration) bool {
	switch {
	case t.exhausted:
		return true
	case t.succeeded:
		return h.FailingSince != nil || (h.RecoveryPending && !t.operational)
	case t.failed:
		return h.FailingSince == nil || spellSucceededSince(h) || (!t.operational && h.SpellFailedAt == nil) || failingDue(h, now, failingAfter) ||
			(!t.operational && h.TurnedFailing && !h.FailingAnnounced)
	}
	return false
}

// spellSucceededSince: a success that began after the spell's first failure is on the
// row, its record having judged nothing: on PostgreSQL its statement's snapshot may
// predate the commit of the failure that started the spell (the two recorded side by
// side), so it read no spell to end. Its time on the row ends the spell still.
func spellSucceededSince(h models.EndpointHealth) bool {
	return h.FailingSince != nil && h.LastSuccessAt != nil && h.LastSuccessAt.After(*h.FailingSince)
}

// endSpellSucceededSince ends the spell a success recorded beside it did not end
// (spellSucceededSince); a pending recovery stays for the next success to announce.
func endSpellSucceededSince(h *models.EndpointHealth) {
	if spellSucceededSince(*h) {
		h.FailingSince, h.SpellFailedAt, h.TurnedFailing, h.FailingAnnounced = nil, nil, false, false
	}
}

// failingDue: the spell has lasted failingAfter and has not turned failing yet.
func failingDue(h models.EndpointHealth, now time.Time, failingAfter time.Duration) bool {
	return h.FailingSince != nil && !h.TurnedFailing && now.Sub(*h.FailingSince) >= failingAfter
}

// judgeAttempt makes the health transitions of an attempt under the row's lock (taken
// after the event the record locked).
func judgeAttempt(tx *store.Tx, rec store.AttemptRecord, a *models.DeliveryAttempt, status string, failingAfter time.Duration) error {
	t := turnOf(rec, a, status)
	// Judged now, or at the attempt's start if a clock behind the worker's says earlier.
	now := laterOf(tx.Now(), t.at)
	if !needsJudging(rec.Health, t, now, failingAfter) {
		return nil
	}
	h, found, err := tx.LockHealth(rec.EndpointID)
	if err != nil || !found {
		return err
	}
	endSpellSucceededSince(&h)
	switch {
	case t.succeeded && h.FailingSince != nil && t.at.Before(*h.FailingSince):
		// An attempt that began before the spell's first failure, recorded late (a slow
		// receiver): the spell stands.
	case t.succeeded:
		if h.RecoveryPending && !t.operational {
			if err := emitRecovered(tx, h, t.at); err != nil {
				return err
			}
			h.RecoveryPending, h.RecoveryFrom = false, nil
		}
		h.FailingSince, h.SpellFailedAt, h.TurnedFailing, h.FailingAnnounced = nil, nil, false, false
	case t.failed && h.FailingSince == nil && h.LastSuccessAt != nil && t.at.Before(*h.LastSuccessAt):
		// It began before the last success (recorded late, behind a faster success): no
		// spell starts — failing_since is the first failure since the last success.
	case t.failed:
		if h.FailingSince == nil {
			h.FailingSince = &t.at
		}
		if !t.operational && h.SpellFailedAt == nil {
			h.SpellFailedAt = &t.at
		}
		if err := announceFailing(tx, &h, now, failingAfter); err != nil {
			return err
		}
	}
	if t.exhausted {
		d := catalog.ExhaustedDelivery{ID: a.DeliveryID, EventID: a.EventID, EventType: rec.EventType, Attempts: a.Number, LastError: a.Error}
		if err := exhaust(tx, &h, d, tx.Now()); err != nil {
			return err
		}
	}
	return tx.SaveHealth(&h)
}

// announceFailing turns the spell failing once it has lasted failingAfter, and emits
// endpoint-failing then if the spell had a failed attempt of a non-operational delivery
// and the endpoint is enabled (a disabled one is "disabled", announced as such).
func announceFailing(tx *store.Tx, h *models.EndpointHealth, now time.Time, failingAfter time.Duration) error {
	if failingDue(*h, now, failingAfter) {
		h.TurnedFailing = true
	}
	if !h.TurnedFailing || h.FailingAnnounced || h.SpellFailedAt == nil {
		return nil // not failing, announced, or operational deliveries only (no storms)
	}
	ep, err := tx.Endpoint(h.EndpointID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	h.FailingAnnounced = true
	if !ep.Enabled {
		return nil // disabled: announced as such (endpoint-disabled), not as failing
	}
	h.RecoveryPending, h.RecoveryFrom = true, h.FailingSince
	tx.Emit(store.Emit{Type: catalog.EndpointFailing, ObjectType: "webhook_endpoint", ObjectID: ep.ID,
		Object: catalog.FailingEndpoint{HealthEndpoint: healthEndpoint(ep), FailingSince: stamp(*h.FailingSince)}})
	return nil
}

// emitRecovered emits endpoint-recovered for a success at.
func emitRecovered(tx *store.Tx, h models.EndpointHealth, at time.Time) error {
	ep, err := tx.Endpoint(h.EndpointID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	body := catalog.RecoveredEndpoint{HealthEndpoint: healthEndpoint(ep), RecoveredAt: stamp(at)}
	if h.RecoveryFrom != nil {
		s := stamp(*h.RecoveryFrom)
		body.FailingSince = &s
	}
	tx.Emit(store.Emit{Type: catalog.EndpointRecovered, ObjectType: "webhook_endpoint", ObjectID: ep.ID, Object: body})
	return nil
}

// exhaust handles a delivery that used its attempts up: announced at once when the
// endpoint's minute is over (with the deliveries held back in the one that ended, if the
// minute check has not summed them yet), which opens a new minute; held back and counted
// within it.
func exhaust(tx *store.Tx, h *models.EndpointHealth, d catalog.ExhaustedDelivery, now time.Time) error {
	if h.ExhaustedUntil != nil && now.Before(*h.ExhaustedUntil) {
		h.ExhaustedSuppressed++
		h.ExhaustedDeliveryID = d.ID
		return nil
	}
	return emitExhausted(tx, h, d, h.ExhaustedSuppressed, now)
}

// emitExhausted emits delivery-exhausted and opens the endpoint's next minute.
func emitExhausted(tx *store.Tx, h *models.EndpointHealth, d catalog.ExhaustedDelivery, suppressed int, now time.Time) error {
	until := now.Add(ExhaustedWindow)
	h.ExhaustedUntil, h.ExhaustedSuppressed, h.ExhaustedDeliveryID = &until, 0, ""
	ep, err := tx.Endpoint(h.EndpointID)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	tx.Emit(store.Emit{Type: catalog.DeliveryExhausted, ObjectType: "webhook_endpoint", ObjectID: ep.ID,
		Object: healthEndpoint(ep), More: []store.BodyMember{{Key: "delivery", Value: d}, {Key: "suppressed", Value: suppressed}}})
	return nil
}

// healthEndpoint is the endpoint as the health events show it: the URL's host only.
func healthEndpoint(ep models.WebhookEndpoint) catalog.HealthEndpoint {
	out := catalog.HealthEndpoint{ID: ep.ID}
	if ep.Description != "" {
		out.Description = &ep.Description
	}
	if u, err := url.Parse(ep.URL); err == nil {
		out.Host = u.Host
	}
	return out
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func isNotFound(err error) bool { return errors.Is(err, apperr.ErrNotFound) }

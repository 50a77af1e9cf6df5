package webhook

import (
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A delivery's status (CONTRACT §8, §13, §23, §25): every change of it is decided here,
// by Transition, and executed by the store (store.DeliveryUpdate) in the statement that
// makes it — a change's fan-out and a replay creating deliveries, an attempt's record, a
// failure marked at the end of a series (or by the single-endpoint releases' runs), an
// attempt that fell due while its endpoint was disabled, a deleted endpoint's job, a
// replay. Rules about deliveries have their home here: what a change of status may
// change besides (the event's summary, the endpoint's health and disabling, and the
// order lanes of CONTRACT §26) starts from Transition and Ends.

// Change is why a delivery's status changes.
type Change int

const (
	// Created: a change's fan-out (or a replay) gives an endpoint a delivery.
	Created Change = iota
	// AttemptRecorded: an attempt's record sets the status its series leaves
	// (StatusChange.Status: delivered, retrying or failed).
	AttemptRecorded
	// FailureMarked: the delivery's series ended without delivery (the workflow's
	// MarkDeliveryFailed); StatusChange.Error is the reason when the last attempt could
	// not say it ("" keeps the last attempt's error), StatusChange.Replays the replay
	// count the series read.
	FailureMarked
	// EndedByDisabling: an attempt fell due while the endpoint was disabled: the delivery
	// ends failed (endpoint_disabled), replayable once the endpoint is back.
	EndedByDisabling
	// EventFailureMarked: a run of the single-endpoint releases ended without delivery:
	// its event's unfinished deliveries end failed.
	EventFailureMarked
	// SkippedByDeletion: the delivery's endpoint was deleted (its EndpointDeletion job).
	SkippedByDeletion
	// Requeued: a replay puts the delivery back to pending.
	Requeued
	// WaitExpired: the delivery waited in its order lane longer than
	// REVOPS_WEBHOOK_ORDER_MAX_WAIT (CONTRACT §26): it ends failed, order_wait_expired.
	WaitExpired
	// RunClosed: a released delivery of an order lane stayed unfinished, silent for
	// longer than its whole retry schedule: its run closed (CONTRACT §26).
	RunClosed
)

// StatusChange is one change of a delivery's status, with what its caller knows of it.
type StatusChange struct {
	Change Change
	// Status is the status an attempt's series leaves (AttemptRecorded).
	Status string
	// Error is the attempt's error (AttemptRecorded: kept when it failed or was skipped)
	// or the reason of a failure marked (FailureMarked).
	Error string
	// Replays is the replay count the series being settled read when it began
	// (FailureMarked; nil: a run of an earlier release, which did not read it).
	Replays *int
}

// unfinished are the statuses a workflow still works on.
var unfinished = []string{models.EventPending, models.EventRetrying}

// endpointGone is how whoever touches a delivery of a deleted endpoint first ends it: as
// the deletion's job would (CONTRACT §13), never failed — so it is neither announced
// (delivery-exhausted) nor counted as failed.
var endpointGone = &store.DeliveryEnd{Status: models.EventSkipped, Error: models.DeliveryEndpointDeleted}

// Transition decides a change of a delivery's status: the one function every such
// change goes through.
func Transition(c StatusChange) store.DeliveryUpdate {
	switch c.Change {
	case Created:
		return store.DeliveryUpdate{Status: models.EventPending}
	case AttemptRecorded:
		// Whatever the status was: a replay may have put it back to pending meanwhile,
		// and the record of a retried write never gets here (the attempt is stored once).
		// A delivery its endpoint's deletion ended stays so.
		return store.DeliveryUpdate{Status: c.Status, LastError: c.Error, IfGone: endpointGone, Keep: endpointGone}
	case FailureMarked, EndedByDisabling:
		// Only while under way, and not replayed since its series read it: a replay is
		// for a new series, which the run starts once this one has settled; ending it
		// failed would lose the replay.
		u := store.DeliveryUpdate{Status: models.EventFailed, From: unfinished, Replays: c.Replays, IfGone: endpointGone}
		switch {
		case c.Change == EndedByDisabling:
			u.LastError = models.DeliveryEndpointDisabled
		case c.Error != "":
			u.LastError = c.Error
		default:
			u.KeepError = true
		}
		return u
	case EventFailureMarked:
		return store.DeliveryUpdate{Status: models.EventFailed, KeepError: true, From: unfinished, IfGone: endpointGone}
	case SkippedByDeletion:
		return store.DeliveryUpdate{Status: models.EventSkipped, LastError: models.DeliveryEndpointDeleted, From: unfinished}
	case Requeued:
		return store.DeliveryUpdate{Status: models.EventPending, CountReplay: true}
	case WaitExpired:
		// Only while it still waits: released meanwhile, it is its run's.
		return store.DeliveryUpdate{Status: models.EventFailed, LastError: models.DeliveryOrderWaitExpired,
			From: []string{models.EventPending}, OnlyWaiting: true}
	case RunClosed:
		return store.DeliveryUpdate{Status: models.EventFailed, LastError: models.DeliveryRunClosed, From: unfinished, IfGone: endpointGone}
	}
	panic("webhook.Transition: unknown change") // a programming error: every Change is above
}

// Ends tells whether a delivery changed to status has ended: delivered, failed or
// skipped (CONTRACT §13). What an ending changes besides — the endpoint's disabling and
// delivery-exhausted (MarkDeliveryFailed), and the release of the next delivery of an
// order lane (CONTRACT §26) — starts from here.
func Ends(status string) bool {
	switch status {
	case models.EventDelivered, models.EventFailed, models.EventSkipped:
		return true
	}
	return false
}

// AttemptChange is what an attempt's record changes besides the attempt: its delivery's
// status (AttemptRecorded, with the attempt's error when it failed or was skipped, none
// once it succeeded), and whether it counts toward its endpoint's health — an attempt
// that reached (or tried to reach) the endpoint; a skipped one sent nothing and says
// nothing of it (CONTRACT §23).
func AttemptChange(a *models.DeliveryAttempt, status string) store.AttemptChange {
	failed := a.Outcome == models.AttemptFailed
	lastError := ""
	if failed || a.Outcome == models.AttemptSkipped {
		lastError = a.Error
	}
	return store.AttemptChange{
		Delivery:        Transition(StatusChange{Change: AttemptRecorded, Status: status, Error: lastError}),
		CountsForHealth: a.Outcome == models.AttemptSucceeded || failed,
	}
}

// NewDelivery is ev's delivery to ep, created at now (Created), with a copy of the
// endpoint's retry policy and ordering: later edits of the endpoint do not change them
// (CONTRACT §13, §26); and the event's object and sequence, which its lane is read by.
func NewDelivery(ev models.Event, ep models.WebhookEndpoint, now time.Time) models.WebhookDelivery {
	return models.WebhookDelivery{
		ID: uuid.NewString(), EventID: ev.ID, EnvironmentID: ev.EnvironmentID, EndpointID: ep.ID,
		Status: Transition(StatusChange{Change: Created}).Status, RetryPolicy: ep.RetryPolicy, CreatedAt: now, UpdatedAt: now,
		ObjectID: ev.ObjectID, Sequence: ev.Sequence, Ordered: ordered(ev, ep),
	}
}

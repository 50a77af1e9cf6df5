package store

import (
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// DeliveryUpdate is a change of deliveries' status as internal/domain/webhook decides it
// (webhook.Transition, the one function every change of a delivery's status goes
// through): the store executes it in its statements — an attempt's record, a failure
// marked, a deletion's page, a replay — and decides nothing of it.
type DeliveryUpdate struct {
	Status    string // the status set
	LastError string // the error set, unless KeepError
	KeepError bool   // last_error stays as it is (a failure marked without a reason)
	// CountReplay counts a replay on the delivery (replays + 1), so that the settling of
	// a series started before it leaves it pending (Replays).
	CountReplay bool
	// Only deliveries in one of From (nil: whatever their status), and, when Replays is
	// set, whose replay count is *Replays, change.
	From    []string
	Replays *int
	// IfGone: a delivery whose endpoint no longer exists (deleted, its job not done yet)
	// ends so instead, read as the statement sees the endpoint (nil: as any other).
	IfGone *DeliveryEnd
	// Keep: a delivery ended so stays as it is.
	Keep *DeliveryEnd
	// OnlyWaiting: only a delivery still waiting in its order lane changes (CONTRACT §26).
	OnlyWaiting bool
}

// DeliveryEnd is a status with its error.
type DeliveryEnd struct{ Status, Error string }

// AttemptChange is what an attempt's record changes besides the attempt, as
// internal/domain/webhook decides it (webhook.AttemptChange): the delivery's status, and
// whether the attempt moves its endpoint's health times.
type AttemptChange struct {
	Delivery        DeliveryUpdate
	CountsForHealth bool
}

// set is the columns u sets on deliveries of table (as named in the statement) at now.
func (u DeliveryUpdate) set(table string, now time.Time) map[string]any {
	set := map[string]any{"status": u.Status, "updated_at": now}
	if u.Status != models.EventPending && u.Status != models.EventRetrying {
		set["waiting_for"] = "" // an ended delivery waits for nothing (CONTRACT §26)
	}
	if !u.KeepError {
		set["last_error"] = u.LastError
	}
	if g := u.IfGone; g != nil {
		set["status"] = gorm.Expr(unlessEndpointGone(table, "?", "?"), u.Status, g.Status)
		if u.KeepError {
			set["last_error"] = gorm.Expr(unlessEndpointGone(table, "last_error", "?"), g.Error)
		} else {
			set["last_error"] = gorm.Expr(unlessEndpointGone(table, "?", "?"), u.LastError, g.Error)
		}
	}
	if u.CountReplay {
		set["replays"] = gorm.Expr("replays + 1")
	}
	return set
}

// where adds u's conditions to q, a query of webhook_deliveries.
func (u DeliveryUpdate) where(q *gorm.DB) *gorm.DB {
	if u.From != nil {
		q = q.Where("status IN ?", u.From)
	}
	if u.Replays != nil {
		q = q.Where("replays = ?", *u.Replays)
	}
	if k := u.Keep; k != nil {
		q = q.Where("NOT (status = ? AND last_error = ?)", k.Status, k.Error)
	}
	if u.OnlyWaiting {
		q = q.Where("waiting_for <> ''")
	}
	return q
}

// apply runs u on the deliveries q selects (a query of webhook_deliveries).
func (u DeliveryUpdate) apply(q *gorm.DB, now time.Time) *gorm.DB {
	return u.where(q.Model(&models.WebhookDelivery{})).Updates(u.set("webhook_deliveries", now))
}

// recordShaped tells whether u has the shape recordFanOutSQL executes in its one
// statement (any status, a new error, an IfGone and a Keep); another goes step by step.
func (u DeliveryUpdate) recordShaped() bool {
	return u.From == nil && u.Replays == nil && !u.KeepError && !u.CountReplay && u.IfGone != nil && u.Keep != nil && !u.OnlyWaiting
}

package store

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/revops/revops/models"
)

// The seam of a change (issue 42): every transaction that writes events calls two
// collaborators the store declares and internal/app wires once at start — the fan-out,
// which decides what the events become (internal/domain/webhook: subscriptions, filters,
// the body), and after commit, which starts what the transaction committed (the one
// dispatcher, internal/dispatch). The store stores what the fan-out gives it and hands
// over what committed; it decides neither.

// FanOut decides, inside the change's transaction and before anything is written, what
// the change's events become (CONTRACT §13, §25): it fills in each event's Payload (the
// webhook body of its Emit), Status (pending, or skipped when nothing takes it),
// FilteredEndpointIDs and Fanout (what its start sends Temporal), and returns the
// deliveries to write with them. events[i] is the row of emits[i], numbered and stamped.
// It reads what it needs through tx (the environment's endpoints: one statement), and
// must not emit: the change's events are being written.
type FanOut interface {
	FanOut(tx *Tx, events []models.Event, emits []Emit) ([]models.WebhookDelivery, error)
}

// AfterCommit receives what a transaction committed that has something to start: the
// events it wrote (each carrying its Fanout) and those its replays marked for
// redispatch (RedispatchAt set), the jobs it recorded, and the paces it changed. It is called right after the
// commit, in the committing goroutine, for every transaction that has any, whoever
// opened it: it must return at once (a queue, a wake) and fail only in its own logs —
// the outbox and the sweepers hold everything it is handed.
type AfterCommit interface {
	Committed(ctx context.Context, c Committed)
}

// Committed is what one transaction hands to AfterCommit.
type Committed struct {
	Events []models.Event
	Jobs   []Job
	// Paces are the endpoints whose pace the transaction changed (CONTRACT §27), for
	// the engine's weight overrides.
	Paces []Pace
}

// ErrNoFanOut: a change emitted events on a store that was given no fan-out (a process or
// a test that did not wire internal/domain/webhook's): the events would have no body.
var ErrNoFanOut = errors.New("store: events emitted but no fan-out is wired (internal/app wires webhook's; tests get it from testdb)")

// seam holds the collaborators, shared by a store and its job pool (Jobs).
type seam struct {
	fanOut      atomic.Pointer[FanOut]
	afterCommit atomic.Pointer[AfterCommit]
}

// SetFanOut makes f the fan-out of every change of the store and of its job pool.
func (s *Store) SetFanOut(f FanOut) { s.hooks().fanOut.Store(&f) }

// SetAfterCommit makes a the receiver of every committed transaction of the store and of
// its job pool (nil: nothing is handed over; the sweepers start it all).
func (s *Store) SetAfterCommit(a AfterCommit) { s.hooks().afterCommit.Store(&a) }

// hooks is the store's seam, made at open (a Store built otherwise, in a test, has an
// empty one of its own).
func (s *Store) hooks() *seam {
	if s.seam == nil {
		s.seam = &seam{}
	}
	return s.seam
}

// fanOutOf is the wired fan-out, or nil.
func (h *seam) fanOutOf() FanOut {
	if h == nil {
		return nil
	}
	if f := h.fanOut.Load(); f != nil {
		return *f
	}
	return nil
}

// handOver gives what committed to the wired AfterCommit, if any and if there is
// anything.
func (h *seam) handOver(ctx context.Context, c Committed) {
	if h == nil || (len(c.Events) == 0 && len(c.Jobs) == 0 && len(c.Paces) == 0) {
		return
	}
	if a := h.afterCommit.Load(); a != nil && *a != nil {
		(*a).Committed(ctx, c)
	}
}

// EnabledEndpoints lists the environment's enabled endpoints, oldest first: those a
// change's events may be delivered to (the fan-out's one read).
func (tx *Tx) EnabledEndpoints() ([]models.WebhookEndpoint, error) {
	var eps []models.WebhookEndpoint
	if err := scope(tx.db, tx.env).Where("enabled = ?", true).Order("created_at, id").Find(&eps).Error; err != nil {
		return nil, err
	}
	return eps, nil
}

// Context is the context the transaction runs under (for the log lines of what it
// decides).
func (tx *Tx) Context() context.Context { return tx.db.Statement.Context }

// Env is the environment the transaction is scoped to.
func (tx *Tx) Env() Env { return tx.env }

package dispatch

import (
	"context"
	"time"

	"github.com/revops/revops/models"
)

// maxRefills is how many environments' overflow a Queue reads back at once.
const maxRefills = 4

// refillTimeout bounds one outbox query.
const refillTimeout = 10 * time.Second

// maxFailedStarts is how many failed starts an environment's reading back passes over
// (each left to the sweeper) before it leaves the rest to the sweeper too: a start that
// timed out under load is passed over; Temporal away fails them all.
const maxFailedStarts = 32

// room is how many events the environment's FIFO may take now (mu held).
func (q *Queue) room(e *envQueue) int {
	return max(min(q.limits.envEvents-e.queued, q.limits.events-q.queued), 0)
}

// kick starts reading the environment's overflow back when its FIFO has room for half
// its part (or is empty), unless a refill runs already or the Queue is closed (mu held).
func (q *Queue) kick(e *envQueue) {
	if !e.overflowed || e.refilling || q.closed || q.refills >= maxRefills {
		return
	}
	if room := q.room(e); room == 0 || (e.queued > 0 && room < q.limits.envEvents/2) {
		return
	}
	e.refilling = true
	q.refills++
	q.wg.Add(1)
	go q.refill(e)
}

// kickAll kicks every overflowed environment (mu held): a batch taken from one FIFO
// makes room in the Queue for all.
func (q *Queue) kickAll() {
	for _, e := range q.turns {
		if q.refills >= maxRefills {
			return
		}
		q.kick(e)
	}
}

// refill reads the environment's overflow back from the outbox, oldest first, while its
// FIFO has room, until the outbox has nothing more of it than what is queued or in
// flight here or failed to start (then it no longer overflows), or its starts keep
// failing (the rest is left to the sweeper, which retries failed starts anyway).
func (q *Queue) refill(e *envQueue) {
	defer q.wg.Done()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.refillOnce(e) {
	}
	e.refilling = false
	q.refills--
	if !e.overflowed {
		q.noLongerOverflowing()
	}
	q.forgetIfIdle(e)
	q.kickAll()
	q.signalIfIdle()
}

// refillOnce reads one page of the environment's overflow and queues it; it tells
// whether to read again (mu held, released during the query).
func (q *Queue) refillOnce(e *envQueue) bool {
	room := q.room(e)
	if q.closed || !e.overflowed || room == 0 {
		return false
	}
	// What is queued or in flight here, or failed to start, comes back too (still
	// undispatched): ask for that much more.
	limit := room + e.queued + e.inEvents + len(e.failed)
	dropped, doneMark := e.dropped, q.done.seq
	q.mu.Unlock()
	ctx, cancel := context.WithTimeout(q.stop, refillTimeout)
	events, err := q.outbox.PendingStarts(ctx, e.env, limit)
	cancel()
	q.mu.Lock()
	if err != nil {
		q.leaveToSweeper(e, "outbox not read", err)
		return false
	}
	fresh := q.fresh(e, events, doneMark)
	if len(e.failed) > maxFailedStarts {
		q.leaveToSweeper(e, "starts failing", nil)
		return false
	}
	taken := q.queueRefilled(e, fresh)
	if len(events) < limit && taken == len(fresh) && e.dropped == dropped {
		e.endOverflow() // nothing left behind in the outbox
	}
	q.spawn()
	// Read on while this one queued some and there is room, or when nothing came back
	// fresh (what did was handed over during the query); not while a change waits for
	// room (the next batch taken kicks a refill again).
	return e.overflowed && (taken > 0 || len(fresh) == 0)
}

// fresh are the events read back that are neither queued nor in flight here, nor
// handed over lately, nor failed. One handed over before the query began that comes back
// failed to start (Starter logs it and sets it aside, or was passed over while set
// aside): it is added to the environment's failed ones, left to the sweeper (mu held).
func (q *Queue) fresh(e *envQueue, events []models.Event, doneMark uint64) []models.Event {
	var fresh []models.Event
	for _, ev := range events {
		k := startKey(ev)
		if _, failed := e.failed[k]; failed {
			continue
		}
		if q.done.doneBefore(k, doneMark) {
			if e.failed == nil {
				e.failed = map[string]struct{}{}
			}
			e.failed[k] = struct{}{}
			continue
		}
		if _, queued := q.known[k]; queued || q.done.has(k) {
			continue
		}
		fresh = append(fresh, ev)
	}
	return fresh
}

// queueRefilled queues events read back, one batch per change, as many as there is room
// for, and says how many (mu held). A change larger than the room waits for an empty
// FIFO, and then goes in parts.
func (q *Queue) queueRefilled(e *envQueue, events []models.Event) int {
	taken := 0
	for len(events) > 0 {
		room, n := q.room(e), changeLen(events)
		if n > room {
			if e.queued > 0 || room == 0 {
				break
			}
			n = room
		}
		q.push(e, dispatchItem{ctx: context.Background(), events: events[:n]})
		taken += n
		events = events[n:]
	}
	return taken
}

// changeLen is how many of the first events are of the first one's change: the events
// of a change share their creation time (a replayed event goes alone).
func changeLen(events []models.Event) int {
	n := 1
	for n < len(events) && events[0].RedispatchAt == nil && events[n].RedispatchAt == nil &&
		events[n].CreatedAt.Equal(events[0].CreatedAt) {
		n++
	}
	return n
}

// leaveToSweeper stops reading the environment's overflow back: what is left of it in
// the outbox waits for the sweeper (mu held).
func (q *Queue) leaveToSweeper(e *envQueue, why string, err error) {
	e.endOverflow()
	if q.stop.Err() != nil {
		return
	}
	q.log.Warn("workflow starts of an environment left to the outbox sweeper", "reason", why,
		"organization_id", e.env.OrganizationID, "environment", e.env.Name, "err", err)
}

// noLongerOverflowing ends the streak of overflows once no environment overflows (mu
// held).
func (q *Queue) noLongerOverflowing() {
	for _, e := range q.turns {
		if e.overflowed {
			return
		}
	}
	if q.overflowing {
		q.overflowing = false
		q.log.Info("workflow start queue takes every environment's events again")
	}
}

package dispatch

import (
	"strconv"

	"github.com/revops/revops/models"
)

// envQueue is one environment's part of a Queue: its FIFO of batches and what it holds
// of the workers. It exists while the environment has work (queued, in flight or
// overflowed).
type envQueue struct {
	env      models.Env
	batches  []dispatchItem
	queued   int // events in batches
	inflight int // batches being handed over
	inEvents int // events in them
	// overflowed: events of the environment wait in the outbox, read back by a refill
	// (refilling while one runs); dropped counts the batches left there, so that a refill
	// knows whether one came in while it read; failed are the events read back whose
	// start failed (left to the sweeper), until the overflow ends.
	overflowed, refilling bool
	dropped               int
	failed                map[string]struct{}
}

func (e *envQueue) endOverflow() {
	e.overflowed = false
	e.failed = nil
}

func (e *envQueue) idle() bool {
	return len(e.batches) == 0 && e.inflight == 0 && !e.overflowed && !e.refilling
}

// envQueue is the environment's part of the Queue, added last in turn order if it had
// no work (mu held).
func (q *Queue) envQueue(env models.Env) *envQueue {
	if e := q.envs[env.ID]; e != nil {
		return e
	}
	e := &envQueue{env: env}
	q.envs[env.ID] = e
	q.turns = append(q.turns, e)
	return e
}

// forgetIfIdle removes an environment without work, so that it takes no share (mu held).
func (q *Queue) forgetIfIdle(e *envQueue) {
	if !e.idle() || q.envs[e.env.ID] != e {
		return
	}
	delete(q.envs, e.env.ID)
	for i, t := range q.turns {
		if t == e {
			q.turns = append(q.turns[:i], q.turns[i+1:]...)
			if q.turn > i {
				q.turn--
			}
			break
		}
	}
	if q.turn >= len(q.turns) {
		q.turn = 0
	}
}

// share is how many workers one environment may hold while it takes another batch: the
// workers divided among the environments with batches waiting, rounded up, at least one.
// An environment whose batches are all in flight does not count: alone with waiting
// batches, an environment may use every worker the others leave free, and a batch of
// another takes the next worker that frees up.
func (q *Queue) share() int {
	n := 0
	for _, e := range q.turns {
		if len(e.batches) > 0 {
			n++
		}
	}
	n = max(n, 1)
	return max((q.limits.workers+n-1)/n, 1)
}

// startable is how many batches may be taken now, each environment within its share.
func (q *Queue) startable() int {
	share, n := q.share(), 0
	for _, e := range q.turns {
		n += min(len(e.batches), max(share-e.inflight, 0))
	}
	return n
}

// take is the next batch, round-robin over the environments below their share that
// have one (mu held).
func (q *Queue) take() (*envQueue, dispatchItem, bool) {
	share := q.share()
	for i := range q.turns {
		k := (q.turn + i) % len(q.turns)
		e := q.turns[k]
		if len(e.batches) == 0 || e.inflight >= share {
			continue
		}
		q.turn = (k + 1) % len(q.turns)
		it := e.batches[0]
		e.batches[0] = dispatchItem{}
		e.batches = e.batches[1:]
		e.queued -= len(it.events)
		q.queued -= len(it.events)
		e.inflight++
		e.inEvents += len(it.events)
		q.kickAll()
		return e, it, true
	}
	return nil, dispatchItem{}, false
}

// push appends a batch to the environment's FIFO (mu held).
func (q *Queue) push(e *envQueue, it dispatchItem) {
	e.batches = append(e.batches, it)
	e.queued += len(it.events)
	q.queued += len(it.events)
	for _, ev := range it.events {
		q.known[startKey(ev)] = struct{}{}
	}
	q.dropping = false
}

// finish records that a batch was handed over (mu held): its events are remembered as
// done, and the environment may have room, or a larger share, for what waits.
func (q *Queue) finish(e *envQueue, it dispatchItem) {
	e.inflight--
	e.inEvents -= len(it.events)
	for _, ev := range it.events {
		k := startKey(ev)
		delete(q.known, k)
		q.done.add(k)
	}
	q.forgetIfIdle(e)
	q.kickAll()
}

// unseen are the events neither queued nor in flight here nor handed over lately (mu
// held).
func (q *Queue) unseen(events []models.Event) []models.Event {
	out := events[:0:0]
	for _, ev := range events {
		k := startKey(ev)
		if _, queued := q.known[k]; queued || q.done.has(k) {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// startKey names one start: an event's first, or the one of its replay at RedispatchAt.
func startKey(e models.Event) string {
	if e.RedispatchAt == nil {
		return e.ID
	}
	return e.ID + "@" + strconv.FormatInt(e.RedispatchAt.UnixMicro(), 10)
}

// byEnvironment splits events into runs of one environment each, in order (a change's
// events are all of one environment: one run).
func byEnvironment(events []models.Event) [][]models.Event {
	var out [][]models.Event
	from := 0
	for i := 1; i <= len(events); i++ {
		if i == len(events) || events[i].EnvironmentID != events[from].EnvironmentID {
			out = append(out, events[from:i])
			from = i
		}
	}
	return out
}

// recentSet remembers the last n keys added (a ring and its index).
type recentSet struct {
	ring []string
	next int
	seq  uint64 // keys added so far
	at   map[string]uint64
}

func newRecentSet(n int) recentSet {
	return recentSet{ring: make([]string, n), at: make(map[string]uint64, n)}
}

func (r *recentSet) add(k string) {
	if old := r.ring[r.next]; old != "" && r.at[old] == r.seq-uint64(len(r.ring))+1 {
		delete(r.at, old)
	}
	r.seq++
	r.ring[r.next] = k
	r.at[k] = r.seq
	r.next = (r.next + 1) % len(r.ring)
}

func (r *recentSet) has(k string) bool {
	_, ok := r.at[k]
	return ok
}

// doneBefore tells whether k was added at or before the mark seq.
func (r *recentSet) doneBefore(k string, mark uint64) bool {
	s, ok := r.at[k]
	return ok && s <= mark
}

package dashboard

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"
)

// hashGate bounds the password hashes (bcrypt) a process computes at once (CONTRACT §17):
// each costs tens of milliseconds of a core, so a burst of logins would otherwise queue
// without bound for the CPU. A login waits briefly for a slot, then is refused (429).
//
// The slots are shared fairly, so that nobody can keep the owner out by flooding the login
// form: a client computes at most one hash at a time (a person never needs two), a slot
// that comes free goes to the next client in turn (round robin over the clients waiting,
// not first come first served, which would hand the gate to whoever sends most), and
// browsers that signed in as the user they name before (device tokens, device.go) take
// their turns before the others: an attacker who holds many addresses cannot out-queue
// the owner's own browser.
type hashGate struct {
	wait time.Duration

	mu      sync.Mutex
	free    int
	holding map[string]bool // clients computing a hash now
	lanes   [2]gateLane     // [0]: known browsers, [1]: everyone else
}

// gateLane is the clients of one kind waiting for a slot, in turn order.
type gateLane struct {
	turns   []string             // each waiting client once, the next to serve first
	waiters map[string][]*waiter // each client's logins, oldest first
}

type waiter struct {
	ready   chan struct{}
	granted bool // set under the gate's lock when a slot is handed over
}

// gateSeat is who asks the gate for a slot: the share it counts against and its lane.
type gateSeat struct {
	share   string
	trusted bool // a browser that signed in as this user before
}

// hashWait is how long a login waits for a free hash slot before it is refused.
const hashWait = 3 * time.Second

func newHashGate(n int, wait time.Duration) *hashGate {
	g := &hashGate{wait: wait, free: max(1, n), holding: map[string]bool{}}
	for i := range g.lanes {
		g.lanes[i].waiters = map[string][]*waiter{}
	}
	return g
}

// defaultHashSlots is one hash per core: more would only queue for the CPU.
func defaultHashSlots() int { return max(2, runtime.GOMAXPROCS(0)) }

// enter takes a slot for s, waiting at most g.wait for its turn; false: none came (or ctx
// ended). A true enter is followed by leave(s).
func (g *hashGate) enter(ctx context.Context, s gateSeat) bool {
	g.mu.Lock()
	if g.free > 0 && !g.holding[s.share] {
		// A free slot with nobody of another client waiting for it (dispatch hands
		// slots to waiters as they free up, so waiters left are at their cap).
		g.free--
		g.holding[s.share] = true
		g.mu.Unlock()
		return true
	}
	w := &waiter{ready: make(chan struct{})}
	g.lanes[s.lane()].push(s.share, w)
	g.mu.Unlock()

	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.granted { // the slot came as the wait ended: take it
		return true
	}
	g.lanes[s.lane()].remove(s.share, w)
	return false
}

// leave gives s's slot back and hands it to the next waiting client in turn.
func (g *hashGate) leave(s gateSeat) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.holding, s.share)
	g.free++
	for g.free > 0 && g.grantNext() {
	}
}

// grantNext hands a free slot to the first client in turn, known browsers first, that
// is not computing a hash already; false: nobody can take it.
func (g *hashGate) grantNext() bool {
	for i := range g.lanes {
		share, w := g.lanes[i].next(g.holding)
		if w == nil {
			continue
		}
		g.free--
		g.holding[share] = true
		w.granted = true
		close(w.ready)
		return true
	}
	return false
}

func (s gateSeat) lane() int {
	if s.trusted {
		return 0
	}
	return 1
}

func (l *gateLane) push(share string, w *waiter) {
	if len(l.waiters[share]) == 0 {
		l.turns = append(l.turns, share)
	}
	l.waiters[share] = append(l.waiters[share], w)
}

// next takes the oldest login of the first client in turn not in busy, and sends that
// client to the back of the turns (or drops it when it has no other login waiting).
func (l *gateLane) next(busy map[string]bool) (string, *waiter) {
	for i, share := range l.turns {
		if busy[share] {
			continue
		}
		q := l.waiters[share]
		w := q[0]
		l.turns = slices.Delete(l.turns, i, i+1)
		if len(q) == 1 {
			delete(l.waiters, share)
		} else {
			l.waiters[share] = q[1:]
			l.turns = append(l.turns, share)
		}
		return share, w
	}
	return "", nil
}

// remove drops w, a login that gave up waiting.
func (l *gateLane) remove(share string, w *waiter) {
	q := slices.DeleteFunc(l.waiters[share], func(x *waiter) bool { return x == w })
	if len(q) > 0 {
		l.waiters[share] = q
		return
	}
	delete(l.waiters, share)
	l.turns = slices.DeleteFunc(l.turns, func(s string) bool { return s == share })
}

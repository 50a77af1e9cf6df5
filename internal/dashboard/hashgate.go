package dashboard

import (
	"context"
	"runtime"
	"time"
)

// hashGate bounds the password hashes (bcrypt) a process computes at once (CONTRACT §17):
// each costs tens of milliseconds of a core, so a burst of logins would otherwise queue
// without bound for the CPU. A login waits briefly for a slot, then is refused (429).
type hashGate struct {
	slots chan struct{}
	wait  time.Duration
}

// hashWait is how long a login waits for a free hash slot before it is refused.
const hashWait = 3 * time.Second

func newHashGate(n int, wait time.Duration) *hashGate {
	return &hashGate{slots: make(chan struct{}, max(1, n)), wait: wait}
}

// defaultHashSlots is one hash per core: more would only queue for the CPU.
func defaultHashSlots() int { return max(2, runtime.GOMAXPROCS(0)) }

// enter takes a slot, waiting at most g.wait; false: none came free (or ctx ended).
func (g *hashGate) enter(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// leave gives a slot back.
func (g *hashGate) leave() { <-g.slots }

package dashboard

import (
	"sync"
	"time"
)

// throttle locks out a login key (email + client address) after too many failed attempts,
// so a password cannot be guessed quickly. It is in memory: a restart forgets it, which only
// gives an attacker one more short window.
type throttle struct {
	maxFailures int           // failures that trigger a lockout
	lockout     time.Duration // how long a lockout lasts
	window      time.Duration // failures older than this are forgotten
	now         func() time.Time

	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	count       int
	last        time.Time
	lockedUntil time.Time
}

func newThrottle(maxFailures int, lockout time.Duration) *throttle {
	return &throttle{maxFailures: maxFailures, lockout: lockout, window: 15 * time.Minute, now: time.Now, keys: map[string]*failures{}}
}

// wait tells how long key is still locked out (0: it may try).
func (t *throttle) wait(key string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.keys[key]
	if !ok {
		return 0
	}
	if d := f.lockedUntil.Sub(t.now()); d > 0 {
		return d
	}
	return 0
}

// failed records a failed attempt; the maxFailures-th one within the window locks key out.
func (t *throttle) failed(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	t.prune(now)
	f, ok := t.keys[key]
	if !ok || now.Sub(f.last) > t.window {
		f = &failures{}
		t.keys[key] = f
	}
	f.count++
	f.last = now
	if f.count >= t.maxFailures {
		f.lockedUntil = now.Add(t.lockout)
		f.count = 0
	}
}

// succeeded forgets key's failures.
func (t *throttle) succeeded(key string) {
	t.mu.Lock()
	delete(t.keys, key)
	t.mu.Unlock()
}

// prune drops stale entries once the map grows, so a flood of distinct keys cannot
// exhaust memory. Called with mu held.
func (t *throttle) prune(now time.Time) {
	if len(t.keys) < 10_000 {
		return
	}
	for k, f := range t.keys {
		if now.Sub(f.last) > t.window && now.After(f.lockedUntil) {
			delete(t.keys, k)
		}
	}
}

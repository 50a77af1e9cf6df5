package api

import (
	"context"
	"sync"
	"time"
)

// The failed-authentication throttle of CONTRACT §17: past authFailLimit failures in
// authFailWindow, a client's keys are checked only against the recently valid keys this
// replica knows (keys.Manager.AuthenticateKnown), without a database lookup.
const (
	authFailLimit  = 30
	authFailWindow = time.Minute
)

// authThrottle counts failed authentications (an unknown, malformed, revoked or expired
// key) per client address in this replica. Its state is per process, like the rate
// limits (CONTRACT §16): a flood of random keys costs each replica at most authFailLimit
// lookups a minute per address.
type authThrottle struct {
	now   func() time.Time
	mu    sync.Mutex
	by    map[string]*failWindow // by clientaddr.Scope
	swept time.Time
}

// failWindow is one client's failures since start (a failure after the window opens a
// new one), its lookups in flight, and a channel closed when one of them ends.
type failWindow struct {
	start   time.Time
	n       int
	pending int
	freed   chan struct{}
}

func newAuthThrottle() *authThrottle {
	return &authThrottle{now: time.Now, by: map[string]*failWindow{}}
}

// admit decides how client's key is checked: 0 means with a database lookup, and then
// done must be called with its outcome; more than 0 means only against the keys this
// replica saw valid lately, and it is how long the client stays throttled. Lookups in
// flight count against the limit as failures would, so a burst of concurrent requests
// with random keys takes no more lookups than the same requests one at a time: past the
// limit, a request waits for a lookup in flight to end (a valid key's ends the wait of
// the next, a failure may end the client's lookups), or for ctx.
func (t *authThrottle) admit(ctx context.Context, client string) time.Duration {
	for {
		now := t.now()
		t.mu.Lock()
		w := t.window(client, now)
		if w.n > authFailLimit {
			t.mu.Unlock()
			return max(time.Nanosecond, w.start.Add(authFailWindow).Sub(now))
		}
		if w.n+w.pending <= authFailLimit {
			w.pending++
			t.mu.Unlock()
			return 0
		}
		if w.freed == nil {
			w.freed = make(chan struct{})
		}
		freed := w.freed
		t.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return time.Second
		}
	}
}

// done ends a lookup admit allowed, counting it when it failed.
func (t *authThrottle) done(client string, failed bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.window(client, now)
	w.pending = max(0, w.pending-1)
	if failed {
		w.n++
	}
	if w.freed != nil {
		close(w.freed)
		w.freed = nil
	}
}

// window is client's current window, a new one (keeping the lookups in flight and their
// waiters) when the last is over. t.mu is held.
func (t *authThrottle) window(client string, now time.Time) *failWindow {
	w, ok := t.by[client]
	if ok && now.Before(w.start.Add(authFailWindow)) {
		return w
	}
	next := &failWindow{start: now}
	if ok {
		next.pending, next.freed = w.pending, w.freed
	}
	t.by[client] = next
	t.sweep(now)
	return next
}

// sweep forgets, at most once a window, the clients whose window is over and who have
// no lookup in flight, so that addresses seen once do not accumulate. t.mu is held.
func (t *authThrottle) sweep(now time.Time) {
	if now.Sub(t.swept) < authFailWindow {
		return
	}
	t.swept = now
	for c, w := range t.by {
		if w.pending == 0 && !now.Before(w.start.Add(authFailWindow)) {
			delete(t.by, c)
		}
	}
}

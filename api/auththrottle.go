package api

import (
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

// failWindow is one client's failures since start; a failure after the window opens a
// new one.
type failWindow struct {
	start time.Time
	n     int
}

func newAuthThrottle() *authThrottle {
	return &authThrottle{now: time.Now, by: map[string]*failWindow{}}
}

// wait tells how long client stays throttled: 0 unless it failed more than authFailLimit
// times in its current window.
func (t *authThrottle) wait(client string) time.Duration {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.by[client]
	if !ok || w.n <= authFailLimit {
		return 0
	}
	return max(0, w.start.Add(authFailWindow).Sub(now))
}

// failed counts one failed authentication of client.
func (t *authThrottle) failed(client string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.by[client]
	if !ok || !now.Before(w.start.Add(authFailWindow)) {
		w = &failWindow{start: now}
		t.by[client] = w
		t.sweep(now)
	}
	w.n++
}

// sweep forgets, at most once a window, the clients whose window is over, so that
// addresses seen once do not accumulate. t.mu is held.
func (t *authThrottle) sweep(now time.Time) {
	if now.Sub(t.swept) < authFailWindow {
		return
	}
	t.swept = now
	for c, w := range t.by {
		if !now.Before(w.start.Add(authFailWindow)) {
			delete(t.by, c)
		}
	}
}

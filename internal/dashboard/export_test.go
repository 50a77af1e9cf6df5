package dashboard

import "time"

// Test-only helpers, compiled into this package's tests alone.

// HoldThrottleClock stops the clock of the throttles of sites built after it at the
// moment it is called, until the returned function restores it. The package's tests do
// not run in parallel.
func HoldThrottleClock() (restore func()) {
	at := time.Now()
	throttleNow = func() time.Time { return at }
	return func() { throttleNow = time.Now }
}

// waiting counts the logins waiting for a slot in s's lane under s's share (tests).
func (g *hashGate) waiting(s gateSeat) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.lanes[s.lane()].waiters[s.share])
}

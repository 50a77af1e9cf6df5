package dashboard

// Test-only helpers, compiled into this package's tests alone.

// waiting counts the logins waiting for a slot in s's lane under s's share (tests).
func (g *hashGate) waiting(s gateSeat) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.lanes[s.lane()].waiters[s.share])
}

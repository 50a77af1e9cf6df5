package envgate

// Test-only helpers, compiled into this package's tests alone.

// environments is how many environments hold or wait for a slot (for tests).
func (g *Gate) environments() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.envs)
}

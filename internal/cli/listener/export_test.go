package listener

// Test-only helpers, compiled into this package's tests alone.

// IsLeftOver tells whether ep is the endpoint of a listen of o's host that no longer runs.
func IsLeftOver(o Owner, ep Endpoint) bool { return o.leftOver(ep.Description) }

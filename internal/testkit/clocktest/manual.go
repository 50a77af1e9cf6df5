package clocktest

import (
	"sync"
	"time"
)

// Manual is a clock the test moves by hand, safe for concurrent use: the code under test
// reads it through Now (a starter's set-aside clock, a consumer's clock).
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual is a clock that reads at until moved.
func NewManual(at time.Time) *Manual { return &Manual{now: at} }

// Now is the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock by d.
func (c *Manual) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

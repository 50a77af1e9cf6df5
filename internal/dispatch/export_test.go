package dispatch

import (
	"context"
	"log/slog"
	"time"
)

// NewQueueWithLimits is NewQueue with other bounds: workers, an environment's events
// and all events in memory.
func NewQueueWithLimits(next Dispatcher, log *slog.Logger, outbox Outbox, workers, envEvents, events int) *Queue {
	return newQueue(next, log, outbox, queueLimits{workers: workers, envEvents: envEvents, events: events})
}

// DrainForTest claims as one wake does, in the caller.
func (c *Claimer) DrainForTest(ctx context.Context) { c.drain(ctx) }

// SetClock has s set failed starts aside by now's clock instead of the wall clock's, so
// that a test moves past a backoff without waiting it out.
func (s *Starter) SetClock(now func() time.Time) { s.holds.now = now }

// SetClock is Starter.SetClock for the jobs' sweeper.
func (s *Jobs) SetClock(now func() time.Time) { s.holds.now = now }

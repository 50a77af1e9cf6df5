package dispatch

import (
	"context"
	"log/slog"
)

// NewQueueWithLimits is NewQueue with other bounds: workers, an environment's events
// and all events in memory.
func NewQueueWithLimits(next Dispatcher, log *slog.Logger, outbox Outbox, workers, envEvents, events int) *Queue {
	return newQueue(next, log, outbox, queueLimits{workers: workers, envEvents: envEvents, events: events})
}

// DrainForTest claims as one wake does, in the caller.
func (c *Claimer) DrainForTest(ctx context.Context) { c.drain(ctx) }

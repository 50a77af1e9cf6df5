package dispatch

import (
	"context"

	"github.com/revops/revops/internal/store"
)

// AfterCommit is the one dispatcher of a process (store.AfterCommit): the store hands it
// what every transaction committed, whoever opened it — a Deal's change, a replay, an
// endpoint disabled, a health transition, a meter alert — right after the commit. Events
// go to Events (a Dispatcher that returns at once: a Queue, or Outboxed on PostgreSQL),
// jobs to Jobs (started off the caller's path). internal/app builds one per process and
// wires it into the store once at start.
type AfterCommit struct {
	Events Dispatcher
	Jobs   JobStarter // nil: the sweeper starts them
	// Paces pushes endpoints' new rates to the engine (CONTRACT §27; nil: the minute
	// check does).
	Paces PacePusher
}

// PacePusher sends paces to the engine off the caller's path (Pacer.Push).
type PacePusher interface {
	Push(ctx context.Context, paces []store.Pace)
}

// JobStarter starts a job's workflow off the caller's path (Jobs.StartDetached).
type JobStarter interface {
	StartDetached(ctx context.Context, j store.Job)
}

var _ store.AfterCommit = AfterCommit{}

// Committed hands over what one transaction committed; it returns at once.
func (a AfterCommit) Committed(ctx context.Context, c store.Committed) {
	if a.Events != nil && len(c.Events) > 0 {
		a.Events.Dispatch(ctx, c.Events)
	}
	if a.Paces != nil && len(c.Paces) > 0 {
		a.Paces.Push(ctx, c.Paces)
	}
	if a.Jobs != nil && len(c.Jobs) > 0 {
		for _, j := range c.Jobs {
			a.Jobs.StartDetached(ctx, j)
		}
	}
}

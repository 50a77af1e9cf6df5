package dispatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/internal/store"
)

// Pacer pushes the paces a transaction changed to the engine right after its commit
// (CONTRACT §27): each paced endpoint's weight override on the paced queue is its rate,
// and an endpoint unpaced or deleted loses its override. It is AfterCommit's, so that
// every write that changes a pace — API, dashboard, deletion — reaches the engine the
// same way. A push that fails is only logged: the minute check (activities.Pacing)
// reconciles the overrides with the database.
type Pacer struct {
	Queue temporalsetup.PacedQueue
	Log   *slog.Logger
	// GoRun runs the push off the committing goroutine (nil: a plain goroutine).
	GoRun func(func())
}

// pushTimeout bounds one push: the minute check covers what it does not finish.
const pushTimeout = 10 * time.Second

// Push sends paces to the engine, off the caller's path; it returns at once.
func (p *Pacer) Push(ctx context.Context, paces []store.Pace) {
	if p.Queue.Client == nil {
		return // no Temporal client (tests of the API alone): the minute check does it
	}
	set, unset := map[string]float32{}, []string(nil)
	for _, pc := range paces {
		if pc.Rate > 0 {
			set[pc.EndpointID] = temporalsetup.Weight(pc.Rate)
		} else {
			unset = append(unset, pc.EndpointID)
		}
	}
	run := p.GoRun
	if run == nil {
		run = func(f func()) { go f() }
	}
	run(func() {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pushTimeout)
		defer cancel()
		if err := p.Queue.SetWeights(pctx, set, unset); err != nil && p.Log != nil {
			p.Log.Warn("paced endpoints' rates not pushed to Temporal; the minute check will", "endpoints", len(paces), "err", err)
		}
	})
}

package dispatch

import (
	"context"
	"sync"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// maxFailuresInRow: starts that had not failed before and fail this many times in a row,
// none succeeding between them, say that Temporal is likely away: a starter then starts
// no more (each would wait out its timeout) and leaves the rest to its next poll or
// sweep.
const maxFailuresInRow = 3

// claimOutcome is what a claim's starts did: those started, and how many of those that
// failed had not failed before (news).
type claimOutcome struct {
	started []store.Started
	news    int
	lastErr error
}

// startAll starts the events' runs, claimStarts at once, one event of each environment
// in turn (interleave), and returns those started. A failed start fails only itself
// (CONTRACT §17): it is set aside (holds), and the others of the claim go on. Once
// maxFailuresInRow starts have failed for the first time and none has succeeded it
// starts no more (Temporal is likely away): what it did not try is left to the next poll.
func (c *Claimer) startAll(ctx context.Context, events []models.Event) claimOutcome {
	var (
		mu    sync.Mutex
		out   claimOutcome
		aside setAsides
		wg    sync.WaitGroup
		slots = make(chan struct{}, claimStarts)
	)
	away := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(out.started) == 0 && out.news >= maxFailuresInRow
	}
	for _, e := range interleave(events) {
		if c.Starter.holds.held(startKey(e)) {
			continue // set aside, beyond those the claim was told to leave
		}
		slots <- struct{}{}
		if ctx.Err() != nil || away() {
			<-slots
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			runID, err := c.Starter.launch(ctx, e)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.lastErr = err
				if aside.add(&c.Starter.holds, startKey(e), err, eventAttrs(e)) {
					out.news++
				}
				return
			}
			c.Starter.holds.started(startKey(e))
			out.started = append(out.started, store.Started{EventID: e.ID, WorkflowID: wire.WorkflowID(e.ID), RunID: runID})
		}()
	}
	wg.Wait()
	aside.log(c.Starter.log(), "webhook delivery", len(out.started) > 0)
	return out
}

// interleave orders events given environment by environment (a claim's round robin
// order) one of each environment in turn, so that the starts made first — claimStarts at
// once — are spread over every environment of the claim, the first one first.
func interleave(events []models.Event) []models.Event {
	envs := byEnvironment(events)
	out := make([]models.Event, 0, len(events))
	for i := 0; len(out) < len(events); i++ {
		for _, evs := range envs {
			if i < len(evs) {
				out = append(out, evs[i])
			}
		}
	}
	return out
}

package meters

import (
	"context"
	"sync"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
)

// QueryWait is how long a values query waits for one of its environment's slots before it
// is refused 429 rate_limited (CONTRACT §21); a variable so that a test may shorten it.
var QueryWait = time.Second

// queryGate admits at most n values queries of one environment at once in this process
// (CONTRACT §21: REVOPS_METER_QUERIES), so that one environment's queries take at most that
// many connections and pages of memory, whatever it sends; other environments' queries
// are admitted meanwhile.
type queryGate struct {
	mu   sync.Mutex
	envs map[string]*envSlots
}

// envSlots are one environment's slots; users counts those holding or waiting for one,
// so that an idle environment leaves nothing behind.
type envSlots struct {
	slots chan struct{}
	users int
}

// enter takes one of env's n slots, waiting up to QueryWait; the returned func gives it
// back. n <= 0 admits every query.
func (g *queryGate) enter(ctx context.Context, env string, n int) (func(), error) {
	if n <= 0 {
		return func() {}, nil
	}
	g.mu.Lock()
	if g.envs == nil {
		g.envs = map[string]*envSlots{}
	}
	e := g.envs[env]
	if e == nil {
		e = &envSlots{slots: make(chan struct{}, n)}
		g.envs[env] = e
	}
	e.users++
	g.mu.Unlock()
	leave := func() {
		g.mu.Lock()
		if e.users--; e.users == 0 {
			delete(g.envs, env)
		}
		g.mu.Unlock()
	}
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots; leave() }, nil
	default:
	}
	wait := time.NewTimer(QueryWait)
	defer wait.Stop()
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots; leave() }, nil
	case <-wait.C:
		leave()
		return nil, apperr.Busy(nil, apperr.CodeRateLimited, time.Second,
			"This environment already runs %d meter values queries at once; retry after the Retry-After delay.", n)
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

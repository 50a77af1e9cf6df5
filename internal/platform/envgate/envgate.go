// Package envgate admits at most n calls of one environment at once in this process
// (CONTRACT §21): meter values queries (REVOPS_METER_QUERIES) and filter tests
// (REVOPS_FILTER_TESTS), so that one environment's calls of a kind take at most that many
// connections, pages of memory and cores, whatever it sends, while other environments'
// calls are admitted meanwhile. A call past the n waits up to Wait for a slot, then is
// refused 429 rate_limited with a Retry-After.
package envgate

import (
	"context"
	"sync"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
)

// Wait is how long a call waits for one of its environment's slots before it is refused;
// a variable so that a test may shorten it.
var Wait = time.Second

// Gate holds the slots of one kind of call; the zero Gate is ready for use.
type Gate struct {
	mu   sync.Mutex
	envs map[string]*envSlots
}

// envSlots are one environment's slots; users counts those holding or waiting for one,
// so that an idle environment leaves nothing behind.
type envSlots struct {
	slots chan struct{}
	users int
}

// Enter takes one of env's n slots, waiting up to Wait; the returned func gives it back.
// what names the calls in the refusal ("meter values queries"). n <= 0 admits every call.
func (g *Gate) Enter(ctx context.Context, env string, n int, what string) (func(), error) {
	if n <= 0 {
		return func() {}, nil
	}
	e := g.join(env, n)
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots; g.leave(env, e) }, nil
	default:
	}
	wait := time.NewTimer(Wait)
	defer wait.Stop()
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots; g.leave(env, e) }, nil
	case <-wait.C:
		g.leave(env, e)
		return nil, apperr.Busy(nil, apperr.CodeRateLimited, time.Second,
			"This environment already runs %d %s at once; retry after the Retry-After delay.", n, what)
	case <-ctx.Done():
		g.leave(env, e)
		return nil, ctx.Err()
	}
}

// join counts one more user of env's slots, making them on first use.
func (g *Gate) join(env string, n int) *envSlots {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.envs == nil {
		g.envs = map[string]*envSlots{}
	}
	e := g.envs[env]
	if e == nil {
		e = &envSlots{slots: make(chan struct{}, n)}
		g.envs[env] = e
	}
	e.users++
	return e
}

func (g *Gate) leave(env string, e *envSlots) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.users--; e.users == 0 {
		delete(g.envs, env)
	}
}

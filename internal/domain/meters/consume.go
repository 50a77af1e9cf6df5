package meters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/revops/revops/internal/platform/isolate"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// turnTime is the time a consumer turn aims at (CONTRACT §21: at most ~0.5 s): an
// environment whose turn took longer gets fewer rows next time, one much quicker more.
const turnTime = 500 * time.Millisecond

// waitingEnvironments bounds the environments one look at the database adds to the
// line. Those in the line already are not listed again, so with more backlogged
// environments than this a new one still joins within a few looks.
const waitingEnvironments = 100

// maxExcept bounds the environments of the line a look names to leave out (a statement's
// parameters); past it, some are listed again and join ignores them.
const maxExcept = 500

// Turn is one consumer step in env within b: ran is false when another transaction held
// the environment; n the rows read; more whether batches are left waiting. A panic on
// the environment's data ends this turn only (guarded).
func Turn(ctx context.Context, st Store, envID string, b Budget) (ran bool, n int, more bool, err error) {
	err = guarded("meter_turn", envID, func() (err error) {
		ran, err = inCursor(ctx, st, models.Env{ID: envID}, func(tx *store.Tx) error {
			var err error
			if n, more, err = consumeStep(tx, b); err != nil {
				return err
			}
			return fireAlerts(tx, b.AlertEvents)
		})
		return err
	})
	return ran, n, more, err
}

// inCursor runs fn in a transaction of env (Store.InTx) holding the environment's usage
// cursor, as every consumer step and backfill page does: ran is false, having run
// nothing, when another transaction holds it (SkipBusy: meter work never waits for meter
// work, nor holds a connection while waiting). env may name its environment by id
// alone: the store completes it when the transaction emits events (usage alerts).
func inCursor(ctx context.Context, st Store, env models.Env, fn func(tx *store.Tx) error) (ran bool, err error) {
	_, err = st.InTx(ctx, env, func(tx *store.Tx) error {
		_, held, err := tx.LockUsageCursor(store.SkipBusy)
		if err != nil || !held {
			return err
		}
		ran = true
		return fn(tx)
	})
	return ran && err == nil, err
}

// guarded runs fn, one step of an environment's meter work (where: its name among the
// metric's fixed labels), and turns a panic in it into an *isolate.Panic wrapped with the
// environment: the step's transaction rolls back as the panic leaves it, nothing is
// counted, and the step's error ends it alone, never the consumer or worker that serves
// every environment (CONTRACT §21: no input can make the consumer fail again and again).
func guarded(where, envID string, fn func() error) error {
	err := isolate.Call(where, fn)
	if _, panicked := err.(*isolate.Panic); panicked {
		return fmt.Errorf("environment %s: %w", envID, err)
	}
	return err
}

// Consumer runs the meter consumers of a worker process (any number of replicas: an
// environment is taken by one transaction at a time, the others skip it). Environments
// with waiting batches take turns, round robin: each turn is one bounded step
// (consumeStep), after which an environment with more waiting goes to the back of the
// line, so that a light environment waits at most one turn of each backlogged one ahead
// of it per consumer (CONTRACT §21).
type Consumer struct {
	Store     Store
	Consumers int           // goroutines taking turns; default 1
	Every     time.Duration // how often to look for environments with waiting batches; default 200ms
	Log       *slog.Logger
	// AlertEventsPerHour caps each environment's meter-threshold-crossed events per hour
	// (REVOPS_ALERT_EVENTS_PER_HOUR); 0 is DefaultAlertEventsPerHour.
	AlertEventsPerHour int
	// Turned, when set, is told of each turn that ran, once it committed and before the
	// consumer takes its next one: its environment, its budget, the rows it read and
	// whether more waits. The heavy-tenant tests observe CONTRACT §21's bounds through it.
	Turned func(env string, b Budget, rows int, more bool)

	now func() time.Time // the set-aside clock; nil: time.Now (tests move their own)
}

// Run consumes until ctx ends. A failed turn (the database away) is logged and its
// environment tried again at the next look: waiting batches stay waiting.
func (c *Consumer) Run(ctx context.Context) {
	every := c.Every
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	l := newLine(c.now)
	var wg sync.WaitGroup
	for range max(1, c.Consumers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.take(ctx, l, log)
		}()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		envs, err := c.Store.WaitingUsageEnvironments(ctx, l.members(), waitingEnvironments)
		switch {
		case ctx.Err() != nil:
			wg.Wait()
			return
		case err != nil && !failing:
			log.Warn("meter consumer cannot list waiting usage; retrying", "err", err)
		case err == nil && failing:
			log.Info("meter consumer lists waiting usage again")
		}
		failing = err != nil
		l.release()
		l.join(envs)
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-t.C:
		}
	}
}

// take runs turns from the line until ctx ends.
func (c *Consumer) take(ctx context.Context, l *line, log *slog.Logger) {
	for {
		env, b, ok := l.next(ctx)
		if !ok {
			return
		}
		start := time.Now()
		b.AlertEvents = c.AlertEventsPerHour
		ran, n, more, err := Turn(ctx, c.Store, env, b)
		took := time.Since(start)
		if p := (*isolate.Panic)(nil); errors.As(err, &p) {
			// The environment's data makes the turn panic: tried again now, it would
			// panic again, at every turn of every replica. It is set aside, out of the
			// line, for a growing while; the others keep their turns (CONTRACT §21).
			// Neither the panic's value nor any of the data goes in the log.
			wait, strikes := l.setAside(env, b)
			log.Error("meter consumer turn panicked; the environment is set aside, its batches stay waiting",
				"environment_id", env, "panic", p.Kind, "panics_in_a_row", strikes, "retry_in", wait, "stack", p.Stack)
			continue
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("meter consumer turn failed; its batches stay waiting", "environment_id", env, "err", err)
		}
		if ran && err == nil && c.Turned != nil {
			c.Turned(env, b, n, more)
		}
		// Held elsewhere or failed: leave it until the next look at the database, so a
		// busy environment is not tried again and again meanwhile.
		l.done(env, adapt(b, took), ran && err == nil, ran && more && err == nil)
	}
}

// adapt scales a budget to the turn time it gave, so that turns take about turnTime:
// halved when the turn took longer, grown by half when it took less. Long turns are what
// a throughput needs (a turn's cost is mostly its figure writes, the same for few rows
// as for many of the same groups), short ones what other environments need: the budget
// settles where a turn takes about turnTime.
func adapt(b Budget, took time.Duration) Budget {
	if took > turnTime { // never below minRowMeters by halving, nor above what it was
		b.RowMeters = max(min(minRowMeters, b.RowMeters), b.RowMeters/2)
	} else {
		b.RowMeters = min(maxRowMeters, max(b.RowMeters, b.RowMeters+b.RowMeters/2))
	}
	return b
}

// line is the round robin of environments with waiting batches: each in it once, taken
// from the front by one consumer at a time, put back at the end while it has more.
type line struct {
	mu      sync.Mutex
	queue   []string
	in      map[string]bool // in the queue, taken by a consumer, or set aside
	budgets map[string]Budget
	wake    chan struct{}
	// An environment whose turn panicked is set aside (in, but out of the queue) until
	// its time; strikes counts its panics since its last good turn.
	aside   map[string]time.Time
	strikes map[string]int
	now     func() time.Time
}

func newLine(now func() time.Time) *line {
	if now == nil {
		now = time.Now
	}
	return &line{budgets: map[string]Budget{}, wake: make(chan struct{}, 1),
		aside: map[string]time.Time{}, strikes: map[string]int{}, now: now}
}

// join adds the environments not in the line yet at its end, oldest waiting first.
func (l *line) join(envs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.in == nil {
		l.in = map[string]bool{}
	}
	for _, e := range envs {
		if !l.in[e] {
			l.in[e] = true
			l.queue = append(l.queue, e)
		}
	}
	if len(l.queue) > 0 {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// members lists (up to maxExcept of) the environments in the line or taken.
func (l *line) members() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, min(len(l.in), maxExcept))
	for e := range l.in {
		if len(out) == maxExcept {
			break
		}
		out = append(out, e)
	}
	return out
}

// next takes the environment at the front, with its budget, waiting for one.
func (l *line) next(ctx context.Context) (string, Budget, bool) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			env := l.queue[0]
			l.queue = l.queue[1:]
			b, ok := l.budgets[env]
			if !ok {
				b = DefaultBudget
			}
			if len(l.queue) > 0 { // let another consumer take the next one
				select {
				case l.wake <- struct{}{}:
				default:
				}
			}
			l.mu.Unlock()
			return env, b, true
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", Budget{}, false
		case <-l.wake:
		}
	}
}

// maxBudgets bounds the budgets a consumer remembers (past it, all start again).
const maxBudgets = 10_000

// done returns an environment after its turn (ok: it ran and committed), with the budget
// of its next turn: at the end of the line when it has more waiting, out of it otherwise.
func (l *line) done(env string, b Budget, ok, more bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ok {
		delete(l.strikes, env)
	}
	if len(l.budgets) >= maxBudgets {
		clear(l.budgets)
	}
	l.budgets[env] = b
	if !more {
		delete(l.in, env)
		return
	}
	l.queue = append(l.queue, env)
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// setAside takes an environment whose turn panicked out of the line for isolate.Backoff
// of its panics in a row (1 s, doubling, at most a minute) and says how long and how
// many. It stays a member meanwhile, so the look at the database does not bring it back
// before its time; release does.
func (l *line) setAside(env string, b Budget) (time.Duration, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.strikes[env]++
	wait := isolate.Backoff(l.strikes[env], isolate.First, isolate.Limit)
	l.aside[env] = l.now().Add(wait)
	l.budgets[env] = b
	return wait, l.strikes[env]
}

// release puts the environments set aside whose time has come back at the end of the
// line (each look at the database calls it).
func (l *line) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for env, until := range l.aside {
		if now.Before(until) {
			continue
		}
		delete(l.aside, env)
		l.queue = append(l.queue, env)
	}
	if len(l.queue) > 0 {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

package meters_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/clocktest"
	"github.com/revops/revops/internal/testkit/syncbuf"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// poisonPayload stands for a tenant's data in a panic's value: it must reach no log.
const poisonPayload = "acct-secret-4242"

// poisoned is the consumer's store with one environment's data made to panic inside its
// turn's transaction, after the cursor lock (as a panic on a row would), while armed.
type poisoned struct {
	meters.Store
	env string

	mu    sync.Mutex
	armed bool
	tries int // turns of env begun
}

func (p *poisoned) InTx(ctx context.Context, env models.Env, fn func(mt *store.Tx) error) ([]models.Event, error) {
	if env.ID != p.env {
		return p.Store.InTx(ctx, env, fn)
	}
	p.mu.Lock()
	p.tries++
	armed := p.armed
	p.mu.Unlock()
	return p.Store.InTx(ctx, env, func(mt *store.Tx) error {
		if armed {
			if _, held, err := mt.LockUsageCursor(store.SkipBusy); err != nil || !held {
				return err
			}
			panic(fmt.Sprintf("bad row of %s", poisonPayload))
		}
		return fn(mt)
	})
}

func (p *poisoned) state() (armed bool, tries int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.armed, p.tries
}

func (p *poisoned) arm(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = on
}

// panicsCounted reads revops_panics_recovered_total{where="meter_turn"}.
func panicsCounted(t *testing.T) float64 {
	return metricstest.Scrape(t).Value(t, `revops_panics_recovered_total{where="meter_turn"}`)
}

// CONTRACT §21 "no input can make the consumer fail again and again", on both databases:
// environment A's data makes its turns panic. The consumer recovers (its transaction
// rolls back, A's batch stays waiting), logs the environment but not the panic's value,
// counts it in revops_panics_recovered_total, and sets A aside; B's batches are counted
// turn after turn meanwhile (its as_of keeps moving) while A gets no turn before its
// time. Past 1 s on the consumer's clock A is tried again; a second panic sets it aside
// for 2 s; once its data no longer panics, A's batch is counted.
func TestConsumerPanicSetsAsideOnlyItsEnvironment(t *testing.T) {
	for name, db := range testdb.Both(t, models.EnvSandbox) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard
			defer cancel()
			st, envB := db.Store, db.Env
			envA, err := st.Environment(ctx, envB.OrganizationID, models.EnvLive)
			if err != nil {
				t.Fatal(err)
			}
			svc := &meters.Queries{Store: st}
			meterIn(ctx, t, svc, st, envA)
			meterIn(ctx, t, svc, st, envB)
			send := func(env models.Env, tx string) time.Time {
				t.Helper()
				body := fmt.Appendf(nil, `{"transaction_id":%q,"mode":"increment","event_metrics":[{"account_id":"acct","product":"api",`+
					`"metric_name":"calls","metric_value":1,"metric_resolution":"minute"}]}`, tx)
				if _, err := usage.Ingest(ctx, st, env, body, time.Now(), idempotency.Reply[usage.StoredReceipt]{}); err != nil {
					t.Fatal(err)
				}
				return time.Now()
			}
			bValues, aValues := meterstest.ServiceValues(svc, envB), meterstest.ServiceValues(svc, envA)

			p := &poisoned{Store: st, env: envA.ID, armed: true}
			clk := clocktest.NewManual(time.Now())
			var logged syncbuf.Buffer
			c := &meters.Consumer{Store: p, Consumers: 1, Every: 10 * time.Millisecond,
				Log: slog.New(slog.NewTextHandler(&logged, nil))}
			c.SetClock(clk.Now)
			counted := panicsCounted(t)
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); c.Run(runCtx) }()
			defer func() { stop(); <-done }()

			aSent := send(envA, "a-1")
			meterstest.WaitAsOf(t, bValues, "calls", send(envB, "b-0"), time.Minute)
			waitTries(ctx, t, p, 1)
			if got := panicsCounted(t) - counted; got != 1 {
				t.Fatalf("%v panics counted, want 1", got)
			}
			// Set aside: B's batches are counted turn after turn, A is not tried again.
			for i := range 3 {
				meterstest.WaitAsOf(t, bValues, "calls", send(envB, fmt.Sprintf("b-%d-1", i)), time.Minute)
			}
			if _, tries := p.state(); tries != 1 {
				t.Fatalf("A tried %d times before its time aside had passed", tries)
			}
			if asOf := asOfOf(ctx, t, aValues); asOf.After(aSent) {
				t.Fatalf("A's as_of %v passed its batch although every turn of A panicked", asOf)
			}
			// Its time passed: tried again, and set aside for 2 s after this second panic.
			// The clock moves only once the consumer has set A aside (its log line comes
			// after), or a slow turn would read the moved clock and start its time aside later.
			waitSetAside(ctx, t, &logged, envA.ID, 1)
			clk.Add(time.Second)
			waitTries(ctx, t, p, 2)
			waitSetAside(ctx, t, &logged, envA.ID, 2)
			clk.Add(time.Second)
			meterstest.WaitAsOf(t, bValues, "calls", send(envB, "b-2"), time.Minute)
			if _, tries := p.state(); tries != 2 {
				t.Fatalf("A tried %d times 1 s after its second panic (set aside for 2 s)", tries)
			}
			if got := panicsCounted(t) - counted; got != 2 {
				t.Fatalf("%v panics counted, want 2", got)
			}
			// Its data no longer panics: A's batch is counted at its next turn.
			p.arm(false)
			clk.Add(time.Second)
			meterstest.WaitAsOf(t, aValues, "calls", aSent, time.Minute)

			log := logged.String()
			if strings.Contains(log, poisonPayload) {
				t.Fatalf("the panic's value reached the log:\n%s", log)
			}
			if n := strings.Count(log, "environment_id="+envA.ID); n != 2 || !strings.Contains(log, "retry_in=2s") {
				t.Fatalf("want two lines naming A, the second with retry_in=2s:\n%s", log)
			}
		})
	}
}

// meterIn creates a sum meter "calls" in env, ready (no usage yet: one page).
func meterIn(ctx context.Context, t *testing.T, svc *meters.Queries, st *store.Store, env models.Env) {
	t.Helper()
	m, err := meters.Create(ctx, svc.Store, env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggSum}, time.Now(), idempotency.Reply[meters.Object]{})
	if err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		if done, _, err = meters.BackfillPage(ctx, st, m.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

// waitTries waits until the poisoned environment's turns have begun n times (ctx bounds
// a hang).
// waitSetAside waits until the consumer has logged n set-asides of environment env.
func waitSetAside(ctx context.Context, t *testing.T, logged *syncbuf.Buffer, env string, n int) {
	t.Helper()
	for ctx.Err() == nil {
		if strings.Count(logged.String(), "environment_id="+env) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the poisoned environment was never set aside %d times", n)
}

func waitTries(ctx context.Context, t *testing.T, p *poisoned, n int) {
	t.Helper()
	for ctx.Err() == nil {
		if _, tries := p.state(); tries >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the poisoned environment's turn %d never began", n)
}

// asOfOf is the as_of of a values answer of the meter "calls".
func asOfOf(ctx context.Context, t *testing.T, values meterstest.Values) time.Time {
	t.Helper()
	now := time.Now().UTC()
	page, err := values(ctx, "calls", meters.ValuesQuery{From: now.Truncate(time.Hour), To: now.Truncate(time.Hour).Add(time.Hour), Window: meters.WindowHour, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return page.AsOf
}

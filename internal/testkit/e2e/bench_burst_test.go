package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// BenchmarkStartBurst measures CONTRACT §17's "Starts under bursts" (docs/benchmarks.md,
// "Bursts (issue 20)"):
//
//	REVOPS_TEST_DATABASE_URL=… go test ./internal/testkit/e2e -run '^$' -bench StartBurst -benchtime 1x -timeout 30m
//
// One environment sends N changes as fast as the API takes them: 32 clients, each
// sending its next change as soon as the API answered its last, none waiting for a
// delivery. Meanwhile a second environment makes one change at a time, each waiting for
// its webhook (and 20 ms) before the next. A sweeper runs as the worker's does (every
// 5 s, events older than 5 s). N is 500, then 2,000 (REVOPS_BENCH_BURSTS="500,2000").
// It prints figures and asserts none.
func BenchmarkStartBurst(b *testing.B) {
	if os.Getenv(testdb.EnvVar) == "" {
		b.Skipf("%s is not set", testdb.EnvVar)
	}
	sizes := burstSizes()
	load0 := noisyload.Loadavg()
	r := newBenchRig(b, slices.Max(sizes))
	other := r.otherTenant(b, 50)
	r.warmUp(b)
	sw := r.startSweeper(b)
	for range b.N {
		var res []burstResult
		for _, n := range sizes {
			res = append(res, r.burst(b, n, other, sw))
		}
		reportBursts(b, res, load0, noisyload.Loadavg())
	}
}

// burstSizes are the bursts to send: REVOPS_BENCH_BURSTS, or 500 and 2,000.
func burstSizes() []int { return noisyload.SizesFromEnv("REVOPS_BENCH_BURSTS", 500, 2000) }

// tenantOf is an environment's secret key and draft deals.
type tenantOf struct {
	env   models.Env
	key   string
	deals []string
}

// otherTenant creates a second organization whose sandbox delivers to the rig's
// receiver, with nDeals draft deals.
func (r *benchRig) otherTenant(b *testing.B, nDeals int) tenantOf {
	ctx := context.Background()
	key, env := r.sandboxOf(ctx, b, "Other", "other@acme.test")
	r.endpointTo(ctx, b, env, r.rc.URL+"/hooks")
	return tenantOf{env: env, key: key, deals: r.createDealsAs(b, key, nDeals)}
}

// burstSweeper is the worker's sweeper, counting what it starts: a first start (a new
// run) is an event that waited for it; "again" is one already started by the queue.
type burstSweeper struct {
	*store.Store
	first, again atomic.Int64
}

func (s *burstSweeper) MarkDispatched(ctx context.Context, env models.Env, eventID, workflowID, runID string, at time.Time) error {
	if runID != "" {
		s.first.Add(1)
	} else {
		s.again.Add(1)
	}
	return s.Store.MarkDispatched(ctx, env, eventID, workflowID, runID, at)
}

// startSweeper runs the sweeper as the worker does. The deal-created events of the
// setup (made without dispatcher) are marked dispatched first: they are not the burst's.
func (r *benchRig) startSweeper(b *testing.B) *burstSweeper {
	if err := r.scratch.Exec("UPDATE events SET dispatched_at = now() WHERE dispatched_at IS NULL").Error; err != nil {
		b.Fatal(err)
	}
	sw := &burstSweeper{Store: r.st}
	s := &dispatch.Starter{Client: r.tc, Store: sw, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.RunSweeper(ctx, 5*time.Second)
	}()
	b.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return sw
}

// burstResult is what one burst measured.
type burstResult struct {
	n           int
	send, wall  time.Duration   // first change sent → last answered, → last delivered
	lats        []time.Duration // by change: the API's answer (the commit) → the receiver
	other       []time.Duration // the other environment's during the burst: change sent → receiver
	starts      []time.Duration // by event: the change → its workflow started (events.dispatched_at)
	otherStarts []time.Duration // the other environment's
	dropped     float64         // events the queue left to the sweeper
	readBack    float64         // events the queue read back from the outbox
	swept, seen int64           // sweeper: first starts, starts of already started runs
	warnings    map[string]int  // the API's warnings during the burst, by message
}

// burst sends n changes of the rig's environment at once while the other environment
// makes its changes one at a time, and waits for every webhook.
func (r *benchRig) burst(b *testing.B, n int, other tenantOf, sw *burstSweeper) burstResult {
	res := burstResult{n: n, lats: make([]time.Duration, n)}
	dropped0, readBack0 := counter("revops_dispatch_dropped_total"), counter("revops_dispatch_overflow_total")
	first0, again0, warn0 := sw.first.Load(), sw.again.Load(), r.warnings.counts()
	arrivals := make([]chan time.Time, n)
	for k := range n {
		arrivals[k] = r.rc.expect(burstKey(n, k))
	}
	stop := make(chan struct{})
	otherDone := make(chan []otherChange)
	go func() { otherDone <- r.otherChanges(b, n, other, stop) }()
	began := time.Now()
	answered := make([]time.Time, n)
	err := parallel(32, n, func(k int) error {
		err := r.call(r.api.URL, "PATCH", "/v1/deals/"+r.deals[k], map[string]any{"opportunity_id": burstKey(n, k)}, nil)
		answered[k] = time.Now()
		return err
	})
	res.send = time.Since(began)
	if err != nil {
		b.Fatalf("burst of %d: %v", n, err)
	}
	timeout := time.After(3 * time.Minute)
	var last time.Time
	for k, arrived := range arrivals {
		select {
		case at := <-arrived:
			res.lats[k] = at.Sub(answered[k])
			if at.After(last) {
				last = at
			}
		case <-timeout:
			b.Fatalf("burst of %d: change %d not delivered within 3 minutes", n, k)
		}
	}
	res.wall = last.Sub(began)
	close(stop)
	// The other environment's changes count while the burst's starts go on: those made
	// before the burst's last workflow start.
	end := r.lastStart(b, began)
	for _, c := range <-otherDone {
		if c.at.Before(end) {
			res.other = append(res.other, c.lat)
		}
	}
	slices.Sort(res.lats)
	slices.Sort(res.other)
	res.dropped = counter("revops_dispatch_dropped_total") - dropped0
	res.readBack = counter("revops_dispatch_overflow_total") - readBack0
	res.swept, res.seen = sw.first.Load()-first0, sw.again.Load()-again0
	res.warnings = r.warnings.counts()
	for msg, n := range warn0 {
		res.warnings[msg] -= n
	}
	res.starts, res.otherStarts = r.startLats(b, r.env, began, time.Now()), r.startLats(b, other.env, began, end)
	return res
}

// lastStart is when the last workflow of the rig's environment's changes since `since`
// started.
func (r *benchRig) lastStart(b *testing.B, since time.Time) time.Time {
	var last time.Time
	err := r.scratch.Raw(`SELECT MAX(dispatched_at) FROM events WHERE environment_id = ? AND created_at >= ?`, r.env.ID, since).Scan(&last).Error
	if err != nil {
		b.Fatal(err)
	}
	return last
}

// startLats are, sorted, the time from each change of env made between since and until
// to its workflow's start, as the events table has them (created_at is the change's
// time, dispatched_at is written once the start returned).
func (r *benchRig) startLats(b *testing.B, env models.Env, since, until time.Time) []time.Duration {
	var secs []float64
	err := r.scratch.Raw(`SELECT EXTRACT(EPOCH FROM dispatched_at - created_at) FROM events
		WHERE environment_id = ? AND created_at >= ? AND created_at < ? AND dispatched_at IS NOT NULL ORDER BY 1`, env.ID, since, until).Scan(&secs).Error
	if err != nil {
		b.Fatal(err)
	}
	out := make([]time.Duration, len(secs))
	for i, s := range secs {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

func burstKey(n, k int) string { return "burst" + strconv.Itoa(n) + "-" + strconv.Itoa(k) }

// otherChange is one change of the other environment: when it was sent, and how long
// until its webhook arrived.
type otherChange struct {
	at  time.Time
	lat time.Duration
}

// otherChanges makes the other environment's changes one at a time until stop, each
// waiting for its webhook.
func (r *benchRig) otherChanges(b *testing.B, n int, other tenantOf, stop chan struct{}) []otherChange {
	var lats []otherChange
	for i := 0; ; i++ {
		select {
		case <-stop:
			return lats
		default:
		}
		key := "other" + strconv.Itoa(n) + "-" + strconv.Itoa(i)
		arrived := r.rc.expect(key)
		t0 := time.Now()
		if err := r.callAs(other.key, r.api.URL, "PATCH", "/v1/deals/"+other.deals[i%len(other.deals)], map[string]any{"opportunity_id": key}, nil); err != nil {
			b.Errorf("other environment: %v", err)
			return lats
		}
		select {
		case at := <-arrived:
			lats = append(lats, otherChange{at: t0, lat: at.Sub(t0)})
		case <-time.After(3 * time.Minute):
			b.Errorf("other environment: %s not delivered within 3 minutes", key)
			return lats
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// counter is a counter's value in the default registry (0 when it has none).
func counter(name string) float64 {
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// reportBursts prints the table and reports the figures as benchmark metrics.
func reportBursts(b *testing.B, res []burstResult, load0, load1 string) {
	var t strings.Builder
	fmt.Fprintf(&t, "bursts of one environment, 32 clients; load average %s → %s\n", load0, load1)
	fmt.Fprintf(&t, "change → receiver (the other environment: change sent → receiver)\n")
	fmt.Fprintf(&t, "%7s %9s %10s %9s %9s %9s %8s %9s %7s %7s | %6s %9s %9s %9s\n", "changes", "sent/s", "delivered/s",
		"p50 ms", "p99 ms", "max ms", "dropped", "read back", "swept", "again", "other", "p50 ms", "p99 ms", "max ms")
	for _, r := range res {
		thr := float64(r.n) / r.wall.Seconds()
		fmt.Fprintf(&t, "%7d %9.0f %10.0f %9.0f %9.0f %9.0f %8.0f %9.0f %7d %7d | %6d %9.0f %9.0f %9.0f\n",
			r.n, float64(r.n)/r.send.Seconds(), thr, ms(pct(r.lats, 0.5)), ms(pct(r.lats, 0.99)), ms(r.lats[len(r.lats)-1]),
			r.dropped, r.readBack, r.swept, r.seen, len(r.other), ms(pct(r.other, 0.5)), ms(pct(r.other, 0.99)), ms(pct(r.other, 1)))
		prefix := "n" + strconv.Itoa(r.n) + "_"
		b.ReportMetric(thr, prefix+"delivered_per_s")
		b.ReportMetric(ms(pct(r.lats, 0.5)), prefix+"p50_ms")
		b.ReportMetric(ms(pct(r.lats, 0.99)), prefix+"p99_ms")
		b.ReportMetric(float64(r.swept), prefix+"swept")
		b.ReportMetric(ms(pct(r.other, 0.99)), prefix+"other_p99_ms")
	}
	fmt.Fprintf(&t, "change → workflow started (events.dispatched_at − created_at)\n")
	fmt.Fprintf(&t, "%7s %9s %9s %9s | %6s %9s %9s %9s\n", "changes", "p50 ms", "p99 ms", "max ms", "other", "p50 ms", "p99 ms", "max ms")
	for _, r := range res {
		fmt.Fprintf(&t, "%7d %9.0f %9.0f %9.0f | %6d %9.0f %9.0f %9.0f\n", len(r.starts), ms(pct(r.starts, 0.5)), ms(pct(r.starts, 0.99)),
			ms(pct(r.starts, 1)), len(r.otherStarts), ms(pct(r.otherStarts, 0.5)), ms(pct(r.otherStarts, 0.99)), ms(pct(r.otherStarts, 1)))
		prefix := "n" + strconv.Itoa(r.n) + "_"
		b.ReportMetric(ms(pct(r.starts, 0.99)), prefix+"start_p99_ms")
		b.ReportMetric(ms(pct(r.otherStarts, 0.99)), prefix+"other_start_p99_ms")
	}
	for _, r := range res {
		for msg, n := range r.warnings {
			if n > 0 {
				fmt.Fprintf(&t, "%d changes: API warned %d× %q\n", r.n, n, msg)
			}
		}
	}
	fmt.Print(t.String()) // b.Logf would cut it at ten lines without -v
}

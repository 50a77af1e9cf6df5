package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/models"
)

// BenchmarkTenantIsolation measures what a heavy tenant costs a light one (CONTRACT §21,
// issue 30; docs/benchmarks.md, "Tenant isolation (§21)"): environment B keeps making
// changes (closed-loop PATCHes, each delivered through Temporal to an HTTPS receiver) and
// ingesting small usage batches counted by one meter, while environment A, another
// organization on the same API, worker, consumer and database, does each heavy thing in
// turn. For every case it prints B's webhook latency (change → receiver) and B's as_of
// lag (the time of B's latest 201 minus its as_of, sampled every 250 ms), p50/p90/p99:
//
//	alone          nothing from A (REVOPS_ISO_SECONDS, default 20 s)
//	backfill       A creates REVOPS_ISO_METERS (32) meters over REVOPS_ISO_HISTORY batches
//	               (20) of 1,000 rows; until every backfill has ended
//	catchup-cN     A ingested REVOPS_ISO_BACKLOG batches (20) of 1,000 rows with
//	               REVOPS_ISO_PAD (512) bytes of padding metadata each while no consumer
//	               ran; N consumers (REVOPS_ISO_CONSUMERS, "2,1") catch up; until A has none waiting
//	delete         A deletes its meters; until every purge has ended
//	alone-end      nothing from A again
//
//	REVOPS_TEST_DATABASE_URL=… go test ./internal/testkit/e2e -run '^$' -bench TenantIsolation -benchtime 1x -timeout 30m
func BenchmarkTenantIsolation(b *testing.B) {
	benchChanges(b) // skips without a database
	cfg := isoConfig{
		seconds: isoEnv("REVOPS_ISO_SECONDS", 20), meters: isoEnv("REVOPS_ISO_METERS", 32),
		history: isoEnv("REVOPS_ISO_HISTORY", 20), backlog: isoEnv("REVOPS_ISO_BACKLOG", 20),
		pad: isoEnv("REVOPS_ISO_PAD", 512), clients: isoEnv("REVOPS_ISO_CLIENTS", 4),
		consumers: isoConsumers(),
	}
	load0 := noisyload.Loadavg()
	r := newBenchRig(b, 200)
	iso := newIsolation(b, r, cfg)
	for range b.N {
		r.warmUp(b)
		var rows []isoResult
		rows = append(rows, iso.phase(b, "alone", nil, func() { time.Sleep(time.Duration(cfg.seconds) * time.Second) }))
		iso.ingestA(b, cfg.history, 0) // counted at once: A has no meter yet
		iso.waitCountedA(b)
		rows = append(rows, iso.phase(b, "backfill", nil, func() { iso.backfill(b) }))
		for _, n := range cfg.consumers {
			name := "catchup-c" + strconv.Itoa(n)
			rows = append(rows, iso.phase(b, name, func() {
				iso.consumer.stop()
				iso.ingestA(b, cfg.backlog, cfg.pad)
				iso.consumer.start(n)
			}, func() { iso.waitCountedA(b) }))
		}
		iso.consumer.stop()
		iso.consumer.start(cfg.consumers[0])
		rows = append(rows, iso.phase(b, "delete", nil, func() { iso.deleteAll(b) }))
		rows = append(rows, iso.phase(b, "alone-end", nil, func() { time.Sleep(time.Duration(cfg.seconds) * time.Second) }))
		iso.report(b, rows, load0)
	}
}

type isoConfig struct {
	seconds, meters, history, backlog, pad, clients int
	consumers                                       []int
}

func isoEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// isoConsumers is REVOPS_ISO_CONSUMERS, the consumer counts of the catch-up cases.
func isoConsumers() []int { return noisyload.SizesFromEnv("REVOPS_ISO_CONSUMERS", 2, 1) }

// isoResult is one case's figures.
type isoResult struct {
	name       string
	took       time.Duration // A's work (the case's length)
	hooks, lag []time.Duration
	load       string
}

// phase runs B's load while A does work: prep first (B idle), then work, B's load
// lasting exactly as long as work.
func (iso *isolation) phase(b *testing.B, name string, prep, work func()) isoResult {
	iso.waitCountedB(b)
	if prep != nil {
		prep()
	}
	res := isoResult{name: name}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var latest atomic.Int64 // UnixNano of B's latest usage 201
	wg.Add(3)
	go func() { defer wg.Done(); iso.bChanges(b, name, stop, &mu, &res.hooks) }()
	go func() { defer wg.Done(); iso.bUsage(b, stop, &latest) }()
	go func() { defer wg.Done(); res.lag = iso.sample(b, stop, &latest) }()
	t0 := time.Now()
	work()
	res.took = time.Since(t0)
	close(stop)
	wg.Wait()
	res.load = noisyload.Loadavg()
	iso.printRow(res)
	return res
}

// sample reads B's as_of lag every 250 ms until stop.
func (iso *isolation) sample(b *testing.B, stop chan struct{}, latest *atomic.Int64) []time.Duration {
	var lag []time.Duration
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return lag
		case <-t.C:
		}
		l := latest.Load()
		if l == 0 {
			continue
		}
		asOf, err := iso.r.st.MeterAsOf(context.Background(), models.Meter{EnvironmentID: iso.envB, Status: models.MeterReady}, time.Now())
		if err != nil {
			b.Error(err)
			continue
		}
		// The latest 201 is read before as_of: a batch accepted meanwhile is not counted
		// against it, so the lag is never overstated by the read itself.
		lag = append(lag, max(0, time.Unix(0, l).Sub(asOf)))
	}
}

// bChanges is B's closed-loop changes: each client PATCHes a deal and waits for its
// webhook at the receiver before the next.
func (iso *isolation) bChanges(b *testing.B, name string, stop chan struct{}, mu *sync.Mutex, out *[]time.Duration) {
	var n atomic.Int64
	var wg sync.WaitGroup
	for range iso.cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := int(n.Add(1))
				key := fmt.Sprintf("iso-%s-%d", name, k)
				arrived := iso.r.rc.expect(key)
				t0 := time.Now()
				if err := iso.r.patchDeal(k, key); err != nil {
					b.Error(err)
					return
				}
				select {
				case at := <-arrived:
					mu.Lock()
					*out = append(*out, at.Sub(t0))
					mu.Unlock()
				case <-time.After(2 * time.Minute):
					b.Errorf("%s: no webhook within 2 minutes", key)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// bUsage posts a batch of 10 metrics to B every 200 ms until stop, noting each 201.
func (iso *isolation) bUsage(b *testing.B, stop chan struct{}, latest *atomic.Int64) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if err := iso.post(iso.keyB, usageBody(iso.seq.Add(1), 10, 0)); err != nil {
			b.Error(err)
			return
		}
		latest.Store(time.Now().UnixNano())
	}
}

func (iso *isolation) printRow(r isoResult) {
	fmt.Printf("%-12s %7.1f s  hooks %5d  p50/p90/p99 %7.1f %7.1f %7.1f ms   lag %4d  p50/p90/p99 %5.2f %5.2f %5.2f s  load %s\n",
		r.name, r.took.Seconds(), len(r.hooks), ms(pct(sorted(r.hooks), 0.5)), ms(pct(r.hooks, 0.9)), ms(pct(r.hooks, 0.99)),
		len(r.lag), pct(sorted(r.lag), 0.5).Seconds(), pct(r.lag, 0.9).Seconds(), pct(r.lag, 0.99).Seconds(), r.load)
}

// report prints each case against the targets (lag p99 ≤ 5 s; webhook p90 within 1 s
// of B alone) and reports the figures as metrics.
func (iso *isolation) report(b *testing.B, rows []isoResult, load0 string) {
	alone := ms(pct(rows[0].hooks, 0.9))
	fmt.Printf("B: %d clients changing deals, 10 metrics every 200 ms; A: %d meters, history %d × 1,000 rows, backlog %d × 1,000 rows (+%d B metadata); load %s → %s\n",
		iso.cfg.clients, iso.cfg.meters, iso.cfg.history, iso.cfg.backlog, iso.cfg.pad, load0, noisyload.Loadavg())
	for _, r := range rows {
		p90, p99 := ms(pct(r.hooks, 0.9)), pct(r.lag, 0.99)
		fmt.Printf("%-12s webhook p90 %.1f ms (alone %.1f: +%.1f ms, target ≤ +1000: %s); as_of lag p99 %.2f s (target ≤ 5: %s)\n",
			r.name, p90, alone, p90-alone, ok(p90-alone <= 1000), p99.Seconds(), ok(p99 <= 5*time.Second))
		b.ReportMetric(p90, r.name+"_hook_p90_ms")
		b.ReportMetric(p99.Seconds(), r.name+"_lag_p99_s")
		b.ReportMetric(r.took.Seconds(), r.name+"_s")
	}
}

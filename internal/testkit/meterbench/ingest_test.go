package meterbench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/testkit/usagebench"
	"github.com/revops/revops/models"
)

// BenchmarkMeterIngest measures usage ingest (batches of 1,000 metrics, 8 clients,
// through the HTTP API) into an environment without meters (arm "plain") and into one
// with the three meters (arm "metered"), on the same server and database, with
// the consumer running beside the API; the arms alternate plain, metered, metered, plain
// (REVOPS_METER_ROUNDS times) so that neither gains from the machine's drift or from the
// tables growing. Each arm ingests for REVOPS_METER_INGEST_SECONDS (default 20). During
// the metered arms the as_of lag — the time the latest batch's 201 arrived minus the
// as_of of GET /v1/meters/{key}/values, floored at 0 — is sampled every 250 ms; after
// each arm, drain is how long after the last 201 as_of passed it. With
// REVOPS_METER_ALERTS set, arm "alerted" is the metered environment with 32 usage alerts
// on its meters (alerts.go), the arms going plain, metered, alerted, alerted, metered,
// plain.
func BenchmarkMeterIngest(b *testing.B) {
	if os.Getenv("REVOPS_METER_INGEST") == "" {
		b.Skip("REVOPS_METER_INGEST is not set: the meter ingest benchmark runs for minutes")
	}
	dur := time.Duration(usagebench.AtoiEnv("REVOPS_METER_INGEST_SECONDS", 20)) * time.Second
	rounds := usagebench.AtoiEnv("REVOPS_METER_ROUNDS", 1)
	alerted := os.Getenv("REVOPS_METER_ALERTS") != ""
	plain := usagebench.Setup(b)
	metered := plain.WithKey(b, "live")
	createMeters(b, metered)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		(&meters.Consumer{Store: plain.Store}).Run(ctx)
	}()
	b.Cleanup(func() { cancel(); <-stopped }) // before the store closes (cleanups run last first)
	var seq atomic.Int64
	seq.Store(time.Now().UnixNano() % 1e12)
	for b.Loop() {
		arms := map[bool][]armResult{}
		fmt.Printf("\n== ingest, batch %d × %d clients, %s per arm, consumer running\n", batchSize, clients, dur)
		fmt.Printf("%-8s %10s %8s %8s %8s %8s %8s %8s %9s %9s %9s %9s  load\n", "arm", "metrics/s", "p50 ms", "p99 ms",
			"lag p50", "lag p99", "lag max", "drain s", "ms/1k go", "ms/1k pg", "wait max", "wait end")
		order := []string{"plain", "metered", "metered", "plain"}
		if alerted {
			order = []string{"plain", "metered", "alerted", "alerted", "metered", "plain"}
		}
		var withAlerts []armResult
		for range rounds {
			for _, arm := range order {
				s := plain
				if arm != "plain" {
					s = metered
				}
				if arm == "alerted" {
					putAlerts(b, s)
				}
				r := runArm(b, s, arm != "plain", dur, &seq)
				if arm == "alerted" {
					r.name = arm
					withAlerts = append(withAlerts, r)
					dropAlerts(b, s)
				} else {
					arms[arm != "plain"] = append(arms[arm != "plain"], r)
				}
				r.print()
			}
		}
		summarize(b, arms[false], arms[true])
		if alerted {
			summarizeAlerts(b, arms[false], arms[true], withAlerts)
		}
	}
}

// armResult is one arm's figures.
type armResult struct {
	name     string
	metrics  int64
	rate     float64         // metrics/s over the ingest
	lat      []time.Duration // each request's
	lag      []time.Duration // the as_of lag samples (metered arms)
	waiting  []int           // rows the consumer had not taken, at each sample
	backlog  int             // … when the last 201 arrived
	drain    time.Duration   // last 201 → as_of past it
	self, pg time.Duration   // CPU from the arm's start until drained
	load     string
}

func (r *armResult) print() {
	perK := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / (float64(r.metrics) / 1000) }
	fmt.Printf("%-8s %10.0f %8.1f %8.1f %8.2f %8.2f %8.2f %8.2f %9.2f %9.2f %9d %9d  %s\n", r.name, r.rate,
		usagebench.Millis(r.lat, 0.5), usagebench.Millis(r.lat, 0.99),
		usagebench.Millis(r.lag, 0.5)/1000, usagebench.Millis(r.lag, 0.99)/1000, usagebench.Millis(r.lag, 1)/1000,
		r.drain.Seconds(), perK(r.self), perK(r.pg), slices.Max(append(r.waiting, 0)), r.backlog, r.load)
}

// runArm ingests into s for dur from 8 clients and measures the arm. It first waits
// until the consumer has taken everything earlier arms left, so that an arm does not
// pay for the one before it.
func runArm(b *testing.B, s *usagebench.Server, withMeters bool, dur time.Duration, seq *atomic.Int64) armResult {
	r := armResult{name: "plain"}
	if withMeters {
		r.name = "metered"
	}
	waitCounted(b, s, time.Now())
	cpu := newCPUMeter(s.Pool)
	var latest atomic.Int64 // UnixNano of the latest 201
	var mu sync.Mutex
	var failed error
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			cpu.sample()
			r.waiting = append(r.waiting, waitingRows(b, s))
			if !withMeters || latest.Load() == 0 {
				continue
			}
			asOf, err := readAsOf(s)
			if err != nil {
				b.Error(err)
				continue
			}
			// The latest 201 read after the answer: a batch accepted while the read was
			// on its way counts against as_of, which can only overstate the lag.
			r.lag = append(r.lag, max(0, time.Unix(0, latest.Load()).Sub(asOf)))
		}
	}()
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), uint64(seq.Load())))
			for time.Now().Before(deadline) {
				body := batchBody(fmt.Sprintf("mtx-%d", seq.Add(1)), rng, batchSize)
				t0 := time.Now()
				if err := s.Post(body); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
					return
				}
				done := time.Now()
				for { // latest = max(latest, done)
					l := latest.Load()
					if done.UnixNano() <= l || latest.CompareAndSwap(l, done.UnixNano()) {
						break
					}
				}
				mu.Lock()
				r.lat = append(r.lat, done.Sub(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(stop)
	<-sampled
	if failed != nil {
		b.Fatal(failed)
	}
	r.metrics = int64(len(r.lat)) * batchSize
	r.rate = float64(r.metrics) / wall.Seconds()
	r.backlog = waitingRows(b, s)
	last := time.Unix(0, latest.Load())
	r.drain = waitCounted(b, s, last).Sub(last)
	r.self, r.pg = cpu.used()
	r.load = usagebench.LoadAvg()
	return r
}

// waitingRows is how many of the environment's usage rows the consumer has not taken yet:
// whether it keeps up (a bounded backlog) or falls behind (a growing one).
func waitingRows(b *testing.B, s *usagebench.Server) int {
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT coalesce(sum(metrics_count), 0) FROM usage_batches
		WHERE environment_id = $1 AND gen IS NULL`, s.EnvID).Scan(&n); err != nil {
		b.Error(err)
	}
	return n
}

// readAsOf reads as_of through the API, with a query that reads little else.
func readAsOf(s *usagebench.Server) (time.Time, error) {
	h := time.Now().UTC().Truncate(time.Hour)
	q := url.Values{"window": {"hour"}, "from": {h.Format(time.RFC3339)}, "to": {h.Add(time.Hour).Format(time.RFC3339)},
		"account_id": {"acct_0"}, "limit": {"1"}}
	msg, _, err := s.Get("/v1/meters/" + meterDefs[0].key + "/values?" + q.Encode())
	if err != nil {
		return time.Time{}, err
	}
	var v struct {
		AsOf time.Time `json:"as_of"`
	}
	if err := json.Unmarshal(msg, &v); err != nil {
		return time.Time{}, fmt.Errorf("values answer: %w", err)
	}
	return v.AsOf, nil
}

// waitCounted waits until the environment's as_of is past t (every batch accepted up to
// t counted) and returns when it saw it. It reads store.MeterAsOf, which the values
// answer reports, for an environment with or without meters (a ready meter's as_of is
// its environment's).
func waitCounted(b *testing.B, s *usagebench.Server, t time.Time) time.Time {
	m := models.Meter{EnvironmentID: s.EnvID, Status: models.MeterReady}
	give := time.Now().Add(10 * time.Minute)
	for {
		now := time.Now()
		asOf, err := s.Store.MeterAsOf(context.Background(), m, now)
		if err != nil {
			b.Fatal(err)
		}
		if asOf.After(t) {
			return now
		}
		if now.After(give) {
			b.Fatalf("as_of %s still not past %s after 10 min", asOf, t)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// summarize prints and reports the figures against the targets: metered
// throughput ≥ 0.7 × plain, as_of lag p99 ≤ 5 s.
func summarize(b *testing.B, plain, metered []armResult) {
	mean := func(rs []armResult) (rate float64, self, pg time.Duration, rows int64) {
		for _, r := range rs {
			rate += r.rate / float64(len(rs))
			self, pg, rows = self+r.self, pg+r.pg, rows+r.metrics
		}
		return rate, self, pg, rows
	}
	pr, ps, pp, pn := mean(plain)
	mr, ms, mp, mn := mean(metered)
	var lag []time.Duration
	var drain time.Duration
	for _, r := range metered {
		lag = append(lag, r.lag...)
		drain = max(drain, r.drain)
	}
	perK := func(d time.Duration, n int64) float64 { return float64(d.Microseconds()) / 1000 / (float64(n) / 1000) }
	fmt.Printf("plain %.0f metrics/s, metered %.0f metrics/s (means of the arms): ratio %.2f (target ≥ 0.7)\n", pr, mr, mr/pr)
	fmt.Printf("CPU ms per 1,000 rows, process + PostgreSQL backends: plain %.2f + %.2f, metered %.2f + %.2f; plain/metered of the totals %.2f\n",
		perK(ps, pn), perK(pp, pn), perK(ms, mn), perK(mp, mn), (perK(ps, pn)+perK(pp, pn))/(perK(ms, mn)+perK(mp, mn)))
	fmt.Printf("as_of lag over %d samples: p50 %.2f s, p99 %.2f s (target ≤ 5 s), max %.2f s; longest drain %.2f s\n",
		len(lag), usagebench.Millis(lag, 0.5)/1000, usagebench.Millis(lag, 0.99)/1000, usagebench.Millis(lag, 1)/1000, drain.Seconds())
	b.ReportMetric(pr, "plain_metrics/s")
	b.ReportMetric(mr, "metered_metrics/s")
	b.ReportMetric(mr/pr, "ratio")
	b.ReportMetric(usagebench.Millis(lag, 0.99)/1000, "lag_p99_s")
	b.ReportMetric(drain.Seconds(), "drain_max_s")
}

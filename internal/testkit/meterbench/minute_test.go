package meterbench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// BenchmarkMeterMinuteValues measures the memory of one values query of window=minute at
// limit=1000 over 1,000 minutes of a meter with 3,000 series, each with a figure in every
// minute (CONTRACT §21; docs/benchmarks.md, "Meter values queries (§21)"): the process's
// resident set before (idle) and at its peak (VmHWM, reset before the query), and the Go
// heap in use at its peak (sampled every millisecond). It prints figures; it asserts none.
//
//	REVOPS_METER_MINUTE=1 REVOPS_TEST_DATABASE_URL=postgres://… \
//	  go test ./internal/testkit/meterbench -run '^$' -bench MeterMinuteValues -benchtime 1x
func BenchmarkMeterMinuteValues(b *testing.B) {
	if os.Getenv("REVOPS_METER_MINUTE") == "" {
		b.Skip("REVOPS_METER_MINUTE is not set")
	}
	ctx := context.Background()
	url := testdb.URL(b)
	st := testdb.Open(b, url)
	svc := &meters.Queries{Store: st}
	env := testdb.SeedOrg(b, st, "Heavy", "heavy@example.com", "live")
	m, err := meterstest.Create(ctx, svc.Store, env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggSum,
		GroupBy: []string{"region"}}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	if err := (meterstest.MinuteFigures{MeterID: m.ID, Start: start, Hours: 17, Series: 3000, Every: 1}).Load(ctx, url); err != nil {
		b.Fatal(err)
	}
	q := meters.ValuesQuery{From: start, To: start.Add(1000 * time.Minute), Window: meters.WindowMinute,
		GroupBy: []string{"region"}, Limit: meters.MaxLimit}
	for b.Loop() {
		for page := 1; page <= 3; page++ {
			runtime.GC()
			idle := procKiB("VmRSS")
			_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // VmHWM from here
			peakHeap := sampleHeap()
			began := time.Now()
			p, err := svc.Values(ctx, env, "calls", q, time.Now())
			took := time.Since(began)
			heap := peakHeap()
			if err != nil {
				b.Fatal(err)
			}
			hwm := procKiB("VmHWM")
			fmt.Printf("minute values page %d (limit %d, %d rows): RSS idle %.1f MiB, peak %.1f MiB (+%.1f MiB); Go heap in use at peak %.1f MiB; %s\n",
				page, q.Limit, len(p.Data), float64(idle)/1024, float64(hwm)/1024, float64(hwm-idle)/1024, float64(heap)/(1<<20), took.Round(time.Millisecond))
			if p.NextPage == "" {
				break
			}
			q.Page = p.NextPage
		}
	}
}

// procKiB reads a field of /proc/self/status, in KiB.
func procKiB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// sampleHeap samples the heap in use every millisecond until the returned func is called,
// which returns the largest sample.
func sampleHeap() func() uint64 {
	var mu sync.Mutex
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

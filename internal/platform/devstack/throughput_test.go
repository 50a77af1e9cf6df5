package devstack

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// TestThroughput is an opt-in load check, not part of the normal suite:
//
//	DEVSTACK_BENCH_N=3000 DEVSTACK_BENCH_CONC=64 go test ./internal/platform/devstack/ -run TestThroughput -v
//
// Callers start a workflow (eagerly, with a search attribute), wait for its
// result and start the next; one worker in the same process runs the
// workflow and its single activity.
func TestThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("DEVSTACK_BENCH_N"))
	if n <= 0 {
		t.Skip("set DEVSTACK_BENCH_N to run")
	}
	conc, _ := strconv.Atoi(os.Getenv("DEVSTACK_BENCH_CONC"))
	if conc <= 0 {
		conc = 64
	}
	s := startStack(t, Options{
		DataDir:          t.TempDir(),
		FrontendAddr:     "127.0.0.1:0",
		SearchAttributes: []string{"RevopsEventType"},
		Logger:           testLogger(),
	})
	defer func() { _ = s.Stop() }()
	c := dial(t, s, "default")
	defer c.Close()
	w := worker.New(c, "bench", worker.Options{})
	w.RegisterWorkflow(greetWorkflow)
	w.RegisterActivity(greetActivity)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := next.Add(1); k <= int64(n); k = next.Add(1) {
				run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
					ID:                    fmt.Sprintf("bench-%d", k),
					TaskQueue:             "bench",
					EnableEagerStart:      true,
					TypedSearchAttributes: temporal.NewSearchAttributes(eventType.ValueSet("bench")),
				}, greetWorkflow, "bench")
				if err == nil {
					err = run.Get(ctx, nil)
				}
				if err != nil {
					failed.Add(1)
					t.Logf("workflow %d: %v", k, err)
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(began)
	t.Logf("%d workflows (%d failed), %d callers: %v => %.1f workflows/s",
		n, failed.Load(), conc, took.Round(time.Millisecond), float64(n)/took.Seconds())
	if failed.Load() > 0 {
		t.Fail()
	}
}

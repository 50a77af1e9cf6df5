package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/internal/testkit/testdb"
)

// BenchmarkNoisyNeighbour is the full-size noisy-neighbour measurement of issue 20 in the
// dev shape (docs/benchmarks.md, "Noisy neighbour, full size"): the bench rig — the API
// with the real Starter, the embedded Temporal stack and the real worker in this one
// process, as `revops dev` runs them, over PostgreSQL. Opt-in (a measurement of minutes,
// not a check):
//
//	REVOPS_MEASURE_NOISY=1 REVOPS_TEST_DATABASE_URL=… \
//	  go test ./internal/testkit/e2e -run '^$' -bench NoisyNeighbour -benchtime 1x -timeout 30m -v
//
// Organization B is the rig's own (one endpoint on the rig's fast HTTPS receiver, deal
// changes); organization A has 16 endpoints on an HTTPS receiver that holds every request
// 25 s before acknowledging it. Two phases of one minute each, open load: B alone (one
// change per second), then B with A creating 4 accounts per second. B's latency is from
// the API's answer to the receiver reading the webhook. REVOPS_WORKER_ACTIVITY_SLOTS,
// when set, is the worker's activity slots (unset: worker.Options{}, as on main).
func BenchmarkNoisyNeighbour(b *testing.B) {
	noisyload.Require(b)
	if os.Getenv(testdb.EnvVar) == "" {
		b.Skipf("%s is not set", testdb.EnvVar)
	}
	set := noisyload.FromEnv()
	r := newBenchRig(b, 60)
	hold := noisyload.NewHoldReceiver(set.Hold)
	b.Cleanup(hold.Release)
	aKey := noisyTenantA(b, r, hold, set.Endpoints)
	a := *r // the rig's client with A's key
	a.key = aKey

	ctx := context.Background()
	bChange := func(_ context.Context, i int, key string) error {
		return r.call(r.api.URL, "PATCH", "/v1/deals/"+r.deals[i%len(r.deals)], map[string]any{"opportunity_id": key}, nil)
	}
	// Warm-up: connections, caches and B's code path, one change at a time.
	for i := range 5 {
		key := "nn-warm-" + strconv.Itoa(i)
		ch := r.rc.expect(key)
		if err := bChange(ctx, i, key); err != nil {
			b.Fatal(err)
		}
		select {
		case <-ch:
		case <-time.After(time.Minute):
			b.Fatalf("warm-up change %s not delivered in a minute", key)
		}
	}
	phase := func(name string, withA bool) noisyload.Phase {
		p := noisyload.Phase{
			Name:   name,
			Key:    func(i int) string { return "nn-" + name + "-" + strconv.Itoa(i) },
			Expect: func(key string) <-chan time.Time { return r.rc.expect(key) },
			B:      bChange,
			Hold:   hold,
			Logf:   func(f string, args ...any) { fmt.Printf("  "+f+"\n", args...) },
		}
		if withA {
			p.A = func(_ context.Context, i int) error {
				return a.call(r.api.URL, "POST", "/v1/accounts", map[string]any{"name": "Noisy A " + strconv.Itoa(i)}, nil)
			}
		}
		return p
	}
	for range b.N {
		rows := []noisyload.Result{
			noisyload.Run(ctx, "dev", set, phase("alone", false)),
			noisyload.Run(ctx, "dev", set, phase("loaded", true)),
		}
		hold.Release() // A's held and queued deliveries end now, not 25 s apiece
		out := noisyload.Table(set, rows)
		fmt.Print(out)
		b.Log("\n" + out)
	}
}

// noisyTenantA creates organization A with its secret sandbox key and n endpoints on the
// holding receiver, and returns the key.
func noisyTenantA(b *testing.B, r *benchRig, hold *noisyload.HoldReceiver, n int) string {
	ctx := context.Background()
	key, env := r.sandboxOf(ctx, b, "Noisy A", "a@noisy.test")
	for i := range n {
		r.endpointTo(ctx, b, env, hold.URL+"/a/"+strconv.Itoa(i))
	}
	return key
}

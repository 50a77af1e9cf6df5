package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// BenchmarkWebhookDelivery measures change-to-delivery through the whole production
// path (docs/benchmarks.md, "Webhook delivery"):
//
//	REVOPS_TEST_DATABASE_URL=… go test ./internal/testkit/e2e -run '^$' -bench WebhookDelivery -benchtime 1x -timeout 30m
//
// Each client makes a change and waits until the receiver has its webhook before making
// the next one. In the same run, on the same server and worker, the baselines:
//   - floor: a no-op workflow with one no-op activity, started with the same client at
//     the same concurrency; latency from the start call to the activity running;
//   - floor+sa: the same with the Starter's search attributes and UI summary/details;
//   - direct: the same signed HTTPS POSTs sent by a Go loop through the same Sender.
//
// REVOPS_BENCH_CHANGES overrides the 1,000 changes per phase (quick iterations).
func BenchmarkWebhookDelivery(b *testing.B) {
	n := benchChanges(b)
	load0 := noisyload.Loadavg()
	r := newBenchRig(b, n)
	for range b.N {
		r.warmUp(b)
		var rows []benchRow
		for _, conc := range []int{1, 32} {
			rows = append(rows, r.row(b, conc, n))
		}
		report(b, n, rows, load0, noisyload.Loadavg())
	}
}

// benchChanges skips a benchmark without a test database and otherwise returns the
// changes per phase: REVOPS_BENCH_CHANGES, or 1,000.
func benchChanges(b *testing.B) int {
	if os.Getenv(testdb.EnvVar) == "" {
		b.Skipf("%s is not set", testdb.EnvVar)
	}
	if v, err := strconv.Atoi(os.Getenv("REVOPS_BENCH_CHANGES")); err == nil && v > 0 {
		return v
	}
	return 1000
}

// row measures one concurrency. The Temporal phases run in two halves, in the order
// floor, floor+sa, ours, ours, floor+sa, floor: the embedded server slows down as its
// SQLite file grows during a run, and this order gives every kind the same mean age.
func (r *benchRig) row(b *testing.B, conc, n int) benchRow {
	name := func(kind string) string { return fmt.Sprintf("%s-c%d", kind, conc) }
	h := n / 2
	row := benchRow{conc: conc}
	floorA := r.phase(b, name("floor"), conc, 0, h, r.startNoop)
	attrsA := r.phase(b, name("floorsa"), conc, 0, h, r.startNoopAttrs)
	r.respLats = make([]time.Duration, n)
	oursA := r.phase(b, name("ours"), conc, 0, h, r.patchDeal)
	row.ours = merge(oursA, r.phase(b, name("ours"), conc, h, n, r.patchDeal))
	row.ours.resp = sorted(r.respLats)
	row.floorAttrs = merge(attrsA, r.phase(b, name("floorsa"), conc, h, n, r.startNoopAttrs))
	row.floor = merge(floorA, r.phase(b, name("floor"), conc, h, n, r.startNoop))
	r.verify(b, name("ours"), n)
	row.direct = r.phase(b, name("direct"), conc, 0, n, r.postDirect)
	return row
}

func merge(a, b phaseResult) phaseResult {
	return phaseResult{wall: a.wall + b.wall, lats: sorted(append(a.lats, b.lats...)),
		after: sorted(append(a.after, b.after...)), cpu: a.cpu.add(b.cpu)}
}

// phaseSettle is how long a phase waits after its last arrival before it reads the CPU
// used; it adds the same idle background to every phase.
const phaseSettle = 300 * time.Millisecond

// phaseResult is what one phase measured.
type phaseResult struct {
	wall time.Duration
	lats []time.Duration // sorted
	resp []time.Duration // ours: the API's response times, sorted
	// after are the latencies counted from the return of the phase's call (the start
	// call; floor+req: its commit and start; ours: the API's answer), sorted.
	after []time.Duration
	cpu   cpuUse // CPU used by the phase
}

func sorted(d []time.Duration) []time.Duration {
	slices.Sort(d)
	return d
}

func (p phaseResult) perSecond() float64 { return float64(len(p.lats)) / p.wall.Seconds() }

func (p phaseResult) pct(q float64) time.Duration { return pct(p.lats, q) }

// pct is the q-quantile of sorted durations (nearest rank).
func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

type benchRow struct {
	conc                            int
	floor, floorAttrs, ours, direct phaseResult
}

// phase runs items from..to-1 on conc closed-loop clients: register the waiters, note the
// time, act, wait for every receiver (or the no-op activities) to see the item.
func (r *benchRig) phase(b *testing.B, name string, conc, from, to int, act func(k int, key string) error) phaseResult {
	b.Helper()
	lats := make([]time.Duration, to-from)
	after := make([]time.Duration, to-from) // from the call's return (ours: the API's answer)
	defer profilePhase(b, name)()
	cpu0 := cpuNow(r.database)
	began := time.Now()
	err := parallel(conc, to-from, func(i int) error {
		k := from + i
		key := name + "-" + strconv.Itoa(k)
		arrivals := make([]chan time.Time, len(r.rcs))
		for j, rc := range r.rcs {
			arrivals[j] = rc.expect(key)
		}
		t0 := time.Now()
		if err := act(k, key); err != nil {
			return err
		}
		called := time.Since(t0)
		// Latency is until the last receiver has it (every endpoint is subscribed).
		timeout := time.After(time.Minute)
		for j, arrived := range arrivals {
			select {
			case at := <-arrived:
				lats[i] = max(lats[i], at.Sub(t0))
				after[i] = lats[i] - called
			case <-timeout:
				return fmt.Errorf("%s: nothing arrived at receiver %d within a minute", key, j)
			}
		}
		return nil
	})
	wall := time.Since(began)
	busy := cpuNow(r.database).since(cpu0)
	// What follows the last arrivals (their records, the runs' last workflow tasks) is
	// the phase's too: let it finish before the CPU used is read, so that it does not
	// land in the next phase's figures (the machine's busy share stays that of the wall
	// time).
	time.Sleep(phaseSettle)
	cpu := cpuNow(r.database).since(cpu0)
	cpu.busy, cpu.total = busy.busy, busy.total
	if err != nil {
		b.Fatalf("phase %s: %v", name, err)
	}
	slices.Sort(lats)
	return phaseResult{wall: wall, lats: lats, after: sorted(after), cpu: cpu}
}

// patchDeal is one change through the API: a PATCH of a draft deal (one deal-updated
// event), the Starter dispatching it before the response.
func (r *benchRig) patchDeal(k int, key string) error {
	t0 := time.Now()
	err := r.call(r.api.URL, "PATCH", "/v1/deals/"+r.deals[k%len(r.deals)], map[string]any{"opportunity_id": key}, nil)
	if k < len(r.respLats) {
		r.respLats[k] = time.Since(t0)
	}
	return err
}

// startNoop starts the floor's workflow with the Starter's client, id and policy.
func (r *benchRig) startNoop(_ int, key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := r.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: key, TaskQueue: wire.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		EnableEagerStart:      true, // as the Starter does
	}, "BenchNoop", key)
	return err
}

// startNoopAttrs starts the floor's workflow with what the Starter adds to a start: the
// four keyword search attributes, the endpoint ids and the UI summary and details
// (sizes alike).
func (r *benchRig) startNoopAttrs(_ int, key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev := models.Event{Type: "deal-updated", ObjectID: r.deals[0], Environment: r.env.Name, OrganizationID: r.env.OrganizationID}
	_, err := r.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: key, TaskQueue: wire.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		EnableEagerStart:      true,
		TypedSearchAttributes: dispatch.SearchAttributesOf(ev, []string{r.deals[0]}),
		StaticSummary:         "deal-updated · deal " + ev.ObjectID[:8] + " → 127.0.0.1:43210",
		StaticDetails:         strings.Repeat("d", 330),
	}, "BenchNoop", key)
	return err
}

// postDirect sends what a delivery sends (a deal webhook body of the same size, signed,
// through the same Sender and HTTP client), from a plain Go loop.
func (r *benchRig) postDirect(_ int, key string) error {
	now := time.Now()
	res := r.sender.Send(context.Background(), webhook.Message{
		URL: r.ep.URL, Method: r.ep.Method, ID: key, At: now,
		Body:    []byte(`{"key":"` + key + `",` + r.sample[1:]),
		Secrets: webhook.SigningSecrets(r.ep, now),
	})
	if !res.OK() {
		return fmt.Errorf("direct POST: %s", res.Reason)
	}
	return nil
}

// warmUp runs a few of each kind (connections, caches, the workflow code paths) and
// keeps one real webhook body as the direct POSTs' template.
func (r *benchRig) warmUp(b *testing.B) {
	r.phase(b, "warm-floor", 4, 0, 40, r.startNoop)
	r.phase(b, "warm-ours", 4, 0, 40, r.patchDeal)
	r.keepSample(b)
	r.phase(b, "warm-direct", 4, 0, 40, r.postDirect)
}

// keepSample keeps one real webhook body (a deal-updated of the warm-up) as the
// template of the baselines' POSTs.
func (r *benchRig) keepSample(b *testing.B) {
	evs, err := r.st.EventsForObject(context.Background(), r.env, r.deals[0])
	if err != nil || len(evs) < 2 {
		b.Fatalf("events of deal %s: %d (err %v)", r.deals[0], len(evs), err)
	}
	r.sample = evs[len(evs)-1].Payload
}

// verify checks every change of a phase: its deal has one deal-updated event carrying
// the change, the receiver got that event's id, and the event ends delivered.
func (r *benchRig) verify(b *testing.B, name string, n int) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for k := range n {
		key := name + "-" + strconv.Itoa(k)
		for {
			ev, err := r.eventOf(r.deals[k%len(r.deals)], key)
			if err != nil {
				b.Fatal(err)
			}
			if got := r.rc.webhookID(key); got != ev.ID {
				b.Fatalf("%s: receiver got webhook-id %q, event is %s", key, got, ev.ID)
			}
			if ev.Status == models.EventDelivered {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s: event %s is %s, want delivered", key, ev.ID, ev.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (r *benchRig) eventOf(dealID, key string) (models.Event, error) {
	evs, err := r.st.EventsForObject(context.Background(), r.env, dealID)
	if err != nil {
		return models.Event{}, err
	}
	var found []models.Event
	for _, e := range evs {
		if e.Type == "deal-updated" && strings.Contains(e.Payload, `"`+key+`"`) {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		return models.Event{}, fmt.Errorf("deal %s: %d deal-updated events for %s, want 1", dealID, len(found), key)
	}
	return found[0], nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// report prints the table and reports the figures as benchmark metrics.
func report(b *testing.B, n int, rows []benchRow, load0, load1 string) {
	var t strings.Builder
	fmt.Fprintf(&t, "%d changes per phase; load average %s → %s\n", n, load0, load1)
	fmt.Fprintf(&t, "%-8s %-8s %10s %9s %9s %12s %10s %6s\n", "clients", "what", "per s", "p50 ms", "p99 ms", "cpu ms/chg", "pg ms/chg", "busy%")
	for _, row := range rows {
		for _, p := range []struct {
			name string
			res  phaseResult
		}{{"floor", row.floor}, {"floor+sa", row.floorAttrs}, {"ours", row.ours}, {"direct", row.direct}} {
			// CPU per change is the steadier figure on a shared machine: it tells what a
			// change costs (tracing on against off, say) where wall times are noise.
			proc, pg, busy := p.res.cpu.perChange(len(p.res.lats))
			fmt.Fprintf(&t, "%-8d %-8s %10.1f %9.2f %9.2f %12.2f %10.2f %6.0f\n", row.conc, p.name,
				p.res.perSecond(), ms(p.res.pct(0.5)), ms(p.res.pct(0.99)), proc, pg, busy)
			prefix := fmt.Sprintf("c%d_%s_", row.conc, strings.ReplaceAll(p.name, "+", "_"))
			b.ReportMetric(p.res.perSecond(), prefix+"per_s")
			b.ReportMetric(ms(p.res.pct(0.5)), prefix+"p50_ms")
			b.ReportMetric(ms(p.res.pct(0.99)), prefix+"p99_ms")
			b.ReportMetric(proc, prefix+"cpu_ms")
			b.ReportMetric(pg, prefix+"pg_ms")
		}
		fmt.Fprintf(&t, "%-8d ours: API response p50 %.2f ms, p99 %.2f ms (the change; its start is queued off the request path)\n",
			row.conc, ms(pct(row.ours.resp, 0.5)), ms(pct(row.ours.resp, 0.99)))
		thr := row.ours.perSecond() / row.floor.perSecond()
		p50 := ms(row.ours.pct(0.5)) / ms(row.floor.pct(0.5))
		fmt.Fprintf(&t, "%-8d ours/floor: throughput %.2f× (target ≥ 0.8: %s), p50 %.2f× (target ≤ 1.3: %s)\n",
			row.conc, thr, ok(thr >= 0.8), p50, ok(p50 <= 1.3))
		fmt.Fprintf(&t, "%-8d absolute: %.1f deliveries/s (target ≥ 200: %s), p99 %.1f ms (target ≤ 500: %s)\n",
			row.conc, row.ours.perSecond(), ok(row.ours.perSecond() >= 200), ms(row.ours.pct(0.99)), ok(row.ours.pct(0.99) <= 500*time.Millisecond))
	}
	fmt.Print(t.String()) // b.Logf would cut it at ten lines without -v
}

func ok(met bool) string {
	if met {
		return "met"
	}
	return "missed"
}

package prodlike_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// BenchmarkAgainstFloor measures delivery on the production shape against the floor on
// the same Temporal server, in the same run (issue 15; docs/benchmarks.md, "Delivery on
// the production shape"). Opt-in (REVOPS_PRODLIKE_MEASURE=1): a measurement, not a check.
//
// Ours: closed-loop clients, each PATCHing its own account through one `revops api`
// (HTTPS) and waiting until the HTTPS receiver has the account-updated webhook, delivered
// by one `revops worker`. Floor: a no-op workflow with one no-op activity on a task queue
// of its own, started from this process by a client without a worker (as `revops api`
// starts, so no eager start either) and run by a worker in this process; latency from
// the start call to the activity running. Phases in halves (floor, ours, ours, floor) at
// 1, 8 and 32 clients; REVOPS_PRODLIKE_CHANGES changes per phase (default 200). Then 15 s
// of ours at 32 clients under CPU profiles of the Temporal server, the api and the worker
// and pg_stat_statements, and 15 s of the floor likewise (the server's profile), written
// to REVOPS_PRODLIKE_PROFILES (default $TMPDIR/revops-prodlike-profiles).
func BenchmarkAgainstFloor(b *testing.B) {
	requireMeasure(b)
	prodlike.Require(b)
	n := 200
	if v, err := strconv.Atoi(os.Getenv("REVOPS_PRODLIKE_CHANGES")); err == nil && v > 0 {
		n = v
	}
	profDir := os.Getenv("REVOPS_PRODLIKE_PROFILES")
	if profDir == "" {
		profDir = filepath.Join(os.TempDir(), "revops-prodlike-profiles")
	}
	if err := os.MkdirAll(profDir, 0o755); err != nil {
		b.Fatal(err)
	}
	rc := newKeyReceiver(b)
	caFile := caFileOf(b, rc.Certificate())
	s := prodlike.Start(b, prodlike.Options{
		DynamicConfig: os.Getenv("REVOPS_PRODLIKE_DYNAMIC_CONFIG"),
		Env:           []string{"REVOPS_WEBHOOK_CA_FILE=" + caFile, "REVOPS_WEBHOOK_ALLOW_PRIVATE=true", "REVOPS_PPROF=1"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	key := secretKey(b, s)
	api := s.StartAPI("api-1")
	wk := s.StartWorker("worker-1")
	c := &apiClient{key: key, urls: []string{api.URL},
		hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: s.ClientTLS(), MaxIdleConnsPerHost: 64}}}
	if _, err := c.change(ctx, "PUT", "/v1/webhook_endpoint", map[string]any{"url": rc.URL, "method": "POST", "enabled": true}); err != nil {
		b.Fatal(err)
	}
	// One account per client: a change locks its account until commit.
	accounts := make([]string, 32)
	for i := range accounts {
		acc, err := c.change(ctx, "POST", "/v1/accounts", map[string]any{"name": fmt.Sprintf("Measure Co %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		accounts[i] = acc["id"].(string)
	}
	fl := startFloor(b, s.Temporal.Address, rc)

	ours := func(client int, k string) error {
		_, err := c.change(ctx, "PATCH", "/v1/accounts/"+accounts[client], map[string]any{"name": k})
		return err
	}
	load0 := noisyload.Loadavg()
	measure(b, rc, "warm-floor", 4, 40, fl.start)
	measure(b, rc, "warm-ours", 4, 40, ours)
	var out strings.Builder
	fmt.Fprintf(&out, "%d changes per phase; load average %s at start\n", n, load0)
	fmt.Fprintf(&out, "%-8s %-6s %9s %9s %9s  %s\n", "clients", "what", "per s", "p50 ms", "p99 ms", "load")
	for _, conc := range []int{1, 8, 32} {
		name := func(kind string) string { return fmt.Sprintf("%s-c%d", kind, conc) }
		fa := measure(b, rc, name("floor")+"a", conc, n/2, fl.start)
		oa := measure(b, rc, name("ours")+"a", conc, n/2, ours)
		ob := measure(b, rc, name("ours")+"b", conc, n-n/2, ours)
		fb := measure(b, rc, name("floor")+"b", conc, n-n/2, fl.start)
		floor, o := fa.merge(fb), oa.merge(ob)
		for _, p := range []struct {
			what string
			r    result
		}{{"floor", floor}, {"ours", o}} {
			fmt.Fprintf(&out, "%-8d %-6s %9.1f %9.2f %9.2f  %s\n", conc, p.what, p.r.perSecond(), msOf(p.r.pct(0.5)), msOf(p.r.pct(0.99)), noisyload.Loadavg())
		}
		thr := o.perSecond() / floor.perSecond()
		d50 := msOf(o.pct(0.5)) - msOf(floor.pct(0.5))
		fmt.Fprintf(&out, "%-8d ours/floor: throughput %.2f× (target ≥ 0.85: %s), p50 %+.2f ms (%.2f×; target at 1 client ≤ +2.5 ms: %s)\n",
			conc, thr, verdict(thr >= 0.85), d50, msOf(o.pct(0.5))/msOf(floor.pct(0.5)), verdict(conc != 1 || d50 <= 2.5))
		b.ReportMetric(o.perSecond(), fmt.Sprintf("c%d_ours_per_s", conc))
		b.ReportMetric(thr, fmt.Sprintf("c%d_ours_per_floor_throughput", conc))
		b.ReportMetric(d50, fmt.Sprintf("c%d_p50_over_floor_ms", conc))
	}
	b.Log("\n" + out.String())
	fmt.Print(out.String())

	// Where the time goes: ours, then the floor, at 32 clients under CPU profiles of every
	// process and pg_stat_statements of the cluster (Temporal's two databases and Revops').
	pg, err := pgx.Connect(ctx, s.PG.URL("postgres"))
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Close(ctx)
	statements := true
	if _, err := pg.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		b.Logf("no pg_stat_statements: %v", err)
		statements = false
	}
	targets := map[string]string{
		"temporal": s.Temporal.PprofURL,
		"api":      "http://" + metricsAddr(b, api.Proc.Log) + "/debug/pprof",
		"worker":   "http://" + metricsAddr(b, wk.Log) + "/debug/pprof",
	}
	profile(ctx, b, pg, statements, targets, profDir, "ours", func(name string) int {
		return len(measure(b, rc, name, 32, 64, ours).lats)
	})
	profile(ctx, b, pg, statements, map[string]string{"temporal": s.Temporal.PprofURL}, profDir, "floor", func(name string) int {
		return len(measure(b, rc, name, 32, 64, fl.start).lats)
	})
}

// profile runs batches of kind for 15 s under CPU profiles of targets, and prints the
// statements PostgreSQL ran meanwhile.
func profile(ctx context.Context, t testing.TB, pg *pgx.Conn, statements bool, targets map[string]string, dir, kind string, batch func(name string) int) {
	const seconds = 15
	if statements {
		if _, err := pg.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for name, base := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fetchProfile(base+"/profile?seconds="+strconv.Itoa(seconds), filepath.Join(dir, name+"."+kind+".cpu.pprof")); err != nil {
				t.Errorf("profile of %s: %v", name, err)
			}
		}()
	}
	began := time.Now()
	done := 0
	for b := 0; time.Since(began) < seconds*time.Second; b++ {
		done += batch(fmt.Sprintf("prof-%s-%d", kind, b))
	}
	wg.Wait()
	fmt.Printf("profiled %s: %d from 32 clients in %s; profiles in %s\n", kind, done, time.Since(began).Round(time.Millisecond), dir)
	if !statements {
		return
	}
	rows, err := pg.Query(ctx, `SELECT d.datname, s.calls, round(s.total_exec_time::numeric, 1), round(s.mean_exec_time::numeric, 3), left(regexp_replace(s.query, '\s+', ' ', 'g'), 140)
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid ORDER BY s.total_exec_time DESC LIMIT 25`)
	if err != nil {
		t.Fatal(err)
	}
	var st strings.Builder
	fmt.Fprintf(&st, "pg_stat_statements, profiled %s (%d), by total time:\n", kind, done)
	for rows.Next() {
		var db, q string
		var calls int64
		var total, mean float64
		if err := rows.Scan(&db, &calls, &total, &mean, &q); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&st, "%-20s %7d calls %9.1f ms total %7.3f ms mean  %s\n", db, calls, total, mean, q)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	fmt.Print(st.String())
	if err := os.WriteFile(filepath.Join(dir, "pg_stat_statements."+kind+".txt"), []byte(st.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// keyReceiver is an HTTPS receiver that acknowledges every request and wakes whoever
// waits for the key found in its body (ours: the account's new name; the floor's no-op
// activity calls arrived directly).
type keyReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	waiters map[string]chan time.Time
}

var keyPattern = regexp.MustCompile(`mk-[a-z0-9-]+`)

func newKeyReceiver(t testing.TB) *keyReceiver {
	rc := &keyReceiver{waiters: map[string]chan time.Time{}}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.arrived(keyPattern.FindString(string(body)), time.Now())
		_, _ = io.WriteString(w, "ok: "+webhooktest.AckSentence)
	}))
	rc.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.StartTLS()
	t.Cleanup(rc.Close)
	return rc
}

func (rc *keyReceiver) expect(key string) chan time.Time {
	ch := make(chan time.Time, 1)
	rc.mu.Lock()
	rc.waiters[key] = ch
	rc.mu.Unlock()
	return ch
}

func (rc *keyReceiver) arrived(key string, at time.Time) {
	rc.mu.Lock()
	ch := rc.waiters[key]
	delete(rc.waiters, key)
	rc.mu.Unlock()
	if ch != nil {
		ch <- at
	}
}

type result struct {
	wall time.Duration
	lats []time.Duration
}

func (r result) merge(o result) result {
	l := append(append([]time.Duration{}, r.lats...), o.lats...)
	slices.Sort(l)
	return result{wall: r.wall + o.wall, lats: l}
}

func (r result) perSecond() float64 { return float64(len(r.lats)) / r.wall.Seconds() }

func (r result) pct(q float64) time.Duration {
	i := int(float64(len(r.lats))*q+0.999999) - 1
	return r.lats[max(0, min(i, len(r.lats)-1))]
}

// measure runs n items on conc closed-loop clients (client i always acts as i).
func measure(t testing.TB, rc *keyReceiver, name string, conc, n int, act func(client int, key string) error) result {
	t.Helper()
	lats := make([]time.Duration, n)
	began := time.Now()
	firstErr := closedLoop(context.Background(), conc, n, func(_ context.Context, cl, k int) error {
		key := "mk-" + strings.ToLower(name) + "-" + strconv.Itoa(k)
		arrived := rc.expect(key)
		t0 := time.Now()
		if err := act(cl, key); err != nil {
			return err
		}
		select {
		case at := <-arrived:
			lats[k] = at.Sub(t0)
			return nil
		case <-time.After(2 * time.Minute):
			return fmt.Errorf("%s: nothing arrived within 2 minutes", key)
		}
	})
	wall := time.Since(began)
	if firstErr != nil {
		t.Fatalf("phase %s: %v", name, firstErr)
	}
	slices.Sort(lats)
	return result{wall: wall, lats: lats}
}

// floor is the no-op workflow's worker (in this process) and a separate starting client.
type floor struct {
	starter client.Client
}

const floorQueue = "revops-bench-floor"

func startFloor(t testing.TB, addr string, rc *keyReceiver) *floor {
	wc, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wc.Close)
	w := worker.New(wc, floorQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context, key string) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
		return workflow.ExecuteActivity(ctx, "FloorNoop", key).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "FloorNoopWorkflow"})
	w.RegisterActivityWithOptions(func(_ context.Context, key string) error {
		rc.arrived(key, time.Now())
		return nil
	}, activity.RegisterOptions{Name: "FloorNoop"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	sc, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.Close)
	return &floor{starter: sc}
}

func (f *floor) start(_ int, key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := f.starter.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: key, TaskQueue: floorQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, "FloorNoopWorkflow", key)
	return err
}

// metricsAddr is the metrics listener's address a Revops process logged at start.
func metricsAddr(t testing.TB, logPath string) string {
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"msg":"metrics listening".*?"addr":"([^"]+)"`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s: no metrics listener logged", logPath)
	}
	return string(m[1])
}

func fetchProfile(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s %s", url, resp.Status, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "missed"
}

package prodlike_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// BenchmarkDeliveryCost is the delivery-cost figure of CONTRACT §22 (issue 31): CPU time
// per delivered webhook of every process involved, and deliveries per second, under open
// load, comparing Revops built from different commits in one sitting. Opt-in: a
// measurement of many minutes, not a check (docs/benchmarks.md, "Delivery cost"):
//
//	REVOPS_PRODLIKE_MEASURE=1 REVOPS_COST_ARMS=old=acfe645,new=. \
//	  scripts/prodlike/run -run '^$' -bench 'DeliveryCost$' -benchtime 1x -timeout 3h
//
// Arms (REVOPS_COST_ARMS, default "old=acfe645,new=.": acfe645 is the commit before issue
// 31's work) are a comma-separated list of NAME=REV[:SETTING]…, the first arm the base the
// others are divided by. REV is a commit (anything git rev-parse takes; built once from
// `git archive` and cached under REVOPS_COST_BIN_CACHE, default $TMPDIR/revops-cost-bins,
// by full hash) or "." (the working tree as it is, built each run). Each SETTING is one of
//
//	REVOPS_X=value             an environment variable of the arm's Revops processes
//	temporal.plugin=NAME       the Temporal server's SQL plugin (postgres12, postgres12_pgx)
//	temporal.shards=N          numHistoryShards of the arm's Temporal cluster
//	temporal.dynamic=PATH      the Temporal dynamic config (default deploy/temporal's)
//	cost.filter=4k             the endpoint carries costFilter, a §25 filter of 4 KiB and
//	                           maximum depth that every change's event passes (created by
//	                           POST /v1/webhook_endpoints, as the singular route takes none)
//
// e.g. "old=acfe645,new=.,pgx=.:temporal.plugin=postgres12_pgx:temporal.shards=1". The
// temporal.* settings apply to the split and serve shapes (the dev shape embeds its own
// Temporal on SQLite). The Temporal server and temporal-sql-tool are the ones this tree's
// scripts/prodlike/temporal builds, for every arm.
//
// Shapes (REVOPS_COST_SHAPES, default "split,dev"): split is the production shape as
// docker-compose.yml deploys it, one `revops api` (HTTPS) and one `revops worker` on a
// Temporal server on PostgreSQL (the prodlike stack); dev is `revops dev`, one process
// with its embedded Temporal on SQLite; serve is one `revops serve` on the prodlike
// stack. Every arm of every round gets a stack of its own, started fresh (new PostgreSQL
// cluster, Temporal databases and Revops database, or a new dev data directory) and
// stopped after: no arm inherits another's data or warm caches.
//
// Load: one webhook endpoint, an HTTPS receiver in this process that answers 200 with
// "Revops API Event Received." at once and records every event id it gets. C clients
// (REVOPS_COST_CLIENTS, default "1,32") each PATCH an account of their own (a change
// holds its account's row until commit), one account-updated event per change, sending
// the next change as soon as the API answered the previous one: open load, no client
// waits for a webhook. No Idempotency-Key is sent, and the per-key and per-environment
// rate limits are off (REVOPS_RATE_LIMIT=0, REVOPS_ENV_RATE_LIMIT=0), so every change
// is one request. Per stack and client count: a warm-up of REVOPS_COST_WARMUP changes
// (default 50) at the same concurrency, waited for, then the measured phase of
// REVOPS_COST_CHANGES changes (default 1000), which ends when the webhook of every change
// arrived (failing after REVOPS_COST_PHASE_TIMEOUT, default 15m, or when a process
// exits).
//
// Measured per phase: utime + stime (/proc/<pid>/stat) of the api, the worker (or the dev
// or serve process), the Temporal server, and the whole PostgreSQL cluster (postmaster,
// every child alive at either reading, and, through the postmaster's cutime + cstime,
// children that ended in between), from the first change sent (the stack idle) until the
// stack is idle again after the last webhook (all measured processes together under 10 %
// of a core for 500 ms): a run's work after its webhook (the attempt's completion, the
// run's last workflow task and writes) is counted, and no phase's leftovers fall into the
// next. This test process (clients and receiver) is not counted; the whole machine's CPU
// per delivery is printed beside, as an upper bound to check the sum against.
// Deliveries/s is the changes over the time from the first change sent to the last
// webhook received. Printed per phase: deliveries/s, change→webhook p50 and p99 (from the
// request's send), the API's acceptance rate, CPU ms per delivery per process and in
// total; then a markdown summary per shape with each arm's range over the rounds and the
// ratio of its mean to the base arm's.
//
// PostgreSQL (REVOPS_COST_PG): "durable" (the default) runs the split and serve shapes'
// cluster with fsync and full_page_writes on, PostgreSQL's defaults and the compose
// file's; "fast" with both off, as the prodlike tests run it.
//
// Profiles (REVOPS_COST_PROFILE=DIR): the dev and serve processes run with their
// profiler on (REVOPS_PPROF=1 on a metrics listener of their own), and each measured
// phase writes a CPU profile of its first REVOPS_COST_PROFILE_SECONDS (default 8) to
// DIR/<shape>.<arm>.r<round>.c<clients>.cpu.pprof: where a delivery's CPU goes in the
// one process that holds Revops and, in dev, Temporal (go tool pprof -top).
//
// Order: REVOPS_COST_ROUNDS rounds (default 2), the arms in order in odd rounds and in
// reverse in even ones: A B, B A.
func BenchmarkDeliveryCost(b *testing.B) {
	requireMeasure(b)
	prodlike.Require(b)
	cfg, err := costConfigFromEnv(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	root, err := prodlike.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	for i := range cfg.arms {
		a := &cfg.arms[i]
		var did string
		if a.rev == "." {
			a.bin, did, err = prodlike.BuildRevops(ctx, root, b.TempDir())
			a.hash = "working tree"
		} else {
			a.bin, a.hash, did, err = prodlike.BuildRevopsAt(ctx, root, a.rev, cfg.binCache)
		}
		if err != nil {
			cancel()
			b.Fatalf("arm %s: %v", a.name, err)
		}
		b.Logf("arm %s: revops of %s (%s), %s", a.name, a.hash, did, a.describe())
	}
	cancel()

	rc := newCostReceiver(b)
	caFile := caFileOf(b, rc.Certificate())
	fmt.Printf("delivery cost: arms %s; shapes %s; clients %v; %d changes per phase after %d of warm-up; %d rounds; %d CPUs; load %s\n",
		cfg.armList(), strings.Join(cfg.shapes, ","), cfg.clients, cfg.changes, cfg.warmup, cfg.rounds, runtime.NumCPU(), noisyload.Loadavg())
	var rows []costRow
	for _, shape := range cfg.shapes {
		for round := 1; round <= cfg.rounds; round++ {
			order := slices.Clone(cfg.arms)
			if round%2 == 0 {
				slices.Reverse(order)
			}
			for _, a := range order {
				ok := b.Run(fmt.Sprintf("%s/round%d/%s", shape, round, a.name), func(b *testing.B) {
					arm := runCostArm(b, cfg, shape, round, a, rc, caFile)
					for _, r := range arm {
						b.ReportMetric(r.perSecond(), fmt.Sprintf("c%d_deliveries_per_s", r.clients))
						b.ReportMetric(r.perDelivery("total"), fmt.Sprintf("c%d_cpu_ms_per_delivery", r.clients))
					}
					rows = append(rows, arm...)
				})
				if !ok {
					b.FailNow()
				}
			}
		}
	}
	summary := costSummary(cfg, rows)
	fmt.Print(summary)
	fmt.Printf("delivery cost: the whole run took %s\n", time.Since(began).Round(time.Second))
}

// costArm is one arm: a revops build and the settings it runs with.
type costArm struct {
	name, rev string
	env       []string // REVOPS_*=value for its Revops processes
	opts      prodlike.Options
	bin, hash string
	filter    bool // cost.filter=4k
}

func (a costArm) describe() string {
	var s []string
	s = append(s, a.env...)
	if a.opts.TemporalPlugin != "" {
		s = append(s, "temporal.plugin="+a.opts.TemporalPlugin)
	}
	if a.opts.HistoryShards != 0 {
		s = append(s, "temporal.shards="+strconv.Itoa(a.opts.HistoryShards))
	}
	if a.opts.DynamicConfig != "" {
		s = append(s, "temporal.dynamic="+a.opts.DynamicConfig)
	}
	if a.filter {
		s = append(s, "cost.filter=4k")
	}
	if len(s) == 0 {
		return "default settings"
	}
	return strings.Join(s, " ")
}

type costConfig struct {
	arms                    []costArm
	shapes                  []string
	clients                 []int
	changes, warmup, rounds int
	phaseTimeout            time.Duration
	binCache                string
	durable                 bool   // PostgreSQL with fsync (REVOPS_COST_PG)
	profileDir              string // CPU profiles of the dev and serve processes (REVOPS_COST_PROFILE)
}

func (c costConfig) armList() string {
	var s []string
	for _, a := range c.arms {
		s = append(s, a.name+"="+a.rev)
	}
	return strings.Join(s, ",")
}

var armName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9+._-]*$`)

// parseArms reads REVOPS_COST_ARMS' syntax (BenchmarkDeliveryCost's comment).
func parseArms(spec string) ([]costArm, error) {
	var arms []costArm
	for _, item := range strings.Split(spec, ",") {
		name, rest, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || !armName.MatchString(name) {
			return nil, fmt.Errorf("arm %q: want NAME=REV[:SETTING]… (NAME of letters, digits, + . _ -)", item)
		}
		parts := strings.Split(rest, ":")
		a := costArm{name: name, rev: parts[0]}
		if a.rev == "" {
			return nil, fmt.Errorf("arm %q: no commit (give one, or . for the working tree)", item)
		}
		for _, set := range parts[1:] {
			k, v, ok := strings.Cut(set, "=")
			if !ok || v == "" {
				return nil, fmt.Errorf("arm %s: setting %q is not KEY=value", name, set)
			}
			switch {
			case k == "temporal.plugin":
				if v != "postgres12" && v != "postgres12_pgx" {
					return nil, fmt.Errorf("arm %s: temporal.plugin %q: postgres12 or postgres12_pgx", name, v)
				}
				a.opts.TemporalPlugin = v
			case k == "temporal.shards":
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return nil, fmt.Errorf("arm %s: temporal.shards %q: a positive number", name, v)
				}
				a.opts.HistoryShards = n
			case k == "temporal.dynamic":
				a.opts.DynamicConfig = v
			case k == "cost.filter":
				if v != "4k" {
					return nil, fmt.Errorf("arm %s: cost.filter %q: 4k", name, v)
				}
				a.filter = true
			case regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`).MatchString(k):
				a.env = append(a.env, set)
			default:
				return nil, fmt.Errorf("arm %s: unknown setting %q (an environment variable NAME=value, or temporal.plugin, temporal.shards, temporal.dynamic, cost.filter)", name, set)
			}
		}
		for _, b := range arms {
			if b.name == a.name {
				return nil, fmt.Errorf("arm %s named twice", name)
			}
		}
		arms = append(arms, a)
	}
	return arms, nil
}

func costConfigFromEnv(getenv func(string) string) (costConfig, error) {
	or := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	posInt := func(k, def string) (int, error) {
		n, err := strconv.Atoi(or(k, def))
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%s=%q: a positive number", k, getenv(k))
		}
		return n, nil
	}
	var c costConfig
	var err error
	if c.arms, err = parseArms(or("REVOPS_COST_ARMS", "old=acfe645,new=.")); err != nil {
		return c, err
	}
	for _, s := range strings.Split(or("REVOPS_COST_SHAPES", "split,dev"), ",") {
		if s = strings.TrimSpace(s); s != "split" && s != "dev" && s != "serve" {
			return c, fmt.Errorf("REVOPS_COST_SHAPES: %q is not split, dev or serve", s)
		}
		c.shapes = append(c.shapes, strings.TrimSpace(s))
	}
	for _, s := range strings.Split(or("REVOPS_COST_CLIENTS", "1,32"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return c, fmt.Errorf("REVOPS_COST_CLIENTS: %q is not a positive number", s)
		}
		c.clients = append(c.clients, n)
	}
	if c.changes, err = posInt("REVOPS_COST_CHANGES", "1000"); err != nil {
		return c, err
	}
	if c.warmup, err = posInt("REVOPS_COST_WARMUP", "50"); err != nil {
		return c, err
	}
	if c.rounds, err = posInt("REVOPS_COST_ROUNDS", "2"); err != nil {
		return c, err
	}
	c.profileDir = getenv("REVOPS_COST_PROFILE")
	switch pg := or("REVOPS_COST_PG", "durable"); pg {
	case "durable", "fast":
		c.durable = pg == "durable"
	default:
		return c, fmt.Errorf("REVOPS_COST_PG: %q is not durable or fast", pg)
	}
	if c.phaseTimeout, err = time.ParseDuration(or("REVOPS_COST_PHASE_TIMEOUT", "15m")); err != nil {
		return c, fmt.Errorf("REVOPS_COST_PHASE_TIMEOUT: %w", err)
	}
	c.binCache = or("REVOPS_COST_BIN_CACHE", filepath.Join(os.TempDir(), "revops-cost-bins"))
	return c, nil
}

// costProc is a measured process: how to read its CPU so far, and whether it still runs.
type costProc struct {
	name  string
	cpu   func() (time.Duration, error)
	alive func() error
}

func pidCPU(pid int) func() (time.Duration, error) {
	return func() (time.Duration, error) { return prodlike.ProcessCPU(pid) }
}

func procAlive(p *prodlike.Proc) func() error {
	return func() error {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited (%v):\n%s", p.Name, err, p.Tail(20))
		}
		return nil
	}
}

// runCostArm starts a fresh stack of shape for arm a, and measures a phase per client
// count on it.
func runCostArm(t testing.TB, cfg costConfig, shape string, round int, a costArm, rc *costReceiver, caFile string) []costRow {
	env := append([]string{"REVOPS_WEBHOOK_CA_FILE=" + caFile, "REVOPS_WEBHOOK_ALLOW_PRIVATE=true",
		"REVOPS_RATE_LIMIT=0", "REVOPS_ENV_RATE_LIMIT=0"}, a.env...)
	var (
		url, key string
		hc       *http.Client
		procs    []costProc
	)
	tr := &http.Transport{MaxIdleConnsPerHost: 128}
	pprofAddr := ""
	if cfg.profileDir != "" && shape != "split" { // split: two processes would share the env
		pprofAddr = freeLoopback(t)
		env = append(env, "REVOPS_PPROF=1", "REVOPS_METRICS_ADDR="+pprofAddr)
	}
	switch shape {
	case "dev":
		d := prodlike.StartDevBinary(t, a.bin, env...)
		url, key = d.URL, d.Key
		procs = []costProc{{"dev", pidCPU(d.Proc.Pid()), procAlive(d.Proc)}}
	default:
		opts := a.opts
		opts.Revops, opts.Env = a.bin, env
		opts.DurablePostgres = cfg.durable
		s := prodlike.Start(t, opts)
		key = secretKey(t, s)
		tr.TLSClientConfig = s.ClientTLS()
		if shape == "split" {
			api := s.StartAPI("api")
			wk := s.StartWorker("worker")
			url = api.URL
			procs = []costProc{{"api", pidCPU(api.Pid()), procAlive(api.Proc)}, {"worker", pidCPU(wk.Pid()), procAlive(wk)}}
		} else {
			sv := s.StartServe("serve")
			url = sv.URL
			procs = []costProc{{"serve", pidCPU(sv.Pid()), procAlive(sv.Proc)}}
		}
		procs = append(procs,
			costProc{"temporal", pidCPU(s.Temporal.Pid()), func() error { return nil }},
			costProc{"postgres", s.PG.CPU, func() error { return nil }})
	}
	hc = &http.Client{Timeout: time.Minute, Transport: tr}
	t.Cleanup(tr.CloseIdleConnections)
	ctx := context.Background()
	cl := &costClient{hc: hc, url: url, key: key}
	endpoint := map[string]any{"url": rc.URL, "method": "POST", "enabled": true}
	route := "PUT /v1/webhook_endpoint"
	if a.filter {
		endpoint["filter"] = json.RawMessage(costFilter(t))
		route = "POST /v1/webhook_endpoints"
	}
	method, path, _ := strings.Cut(route, " ")
	if _, err := cl.do(ctx, method, path, endpoint); err != nil {
		t.Fatal(err)
	}
	accounts := make([]string, slices.Max(cfg.clients))
	for i := range accounts {
		acc, err := cl.do(ctx, "POST", "/v1/accounts", map[string]any{"name": fmt.Sprintf("Cost Co %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		accounts[i] = acc["id"].(string)
	}
	var rows []costRow
	for _, c := range cfg.clients {
		ph := costPhase{cfg: cfg, rc: rc, cl: cl, accounts: accounts[:c], procs: procs}
		ph.run(t, c, cfg.warmup)
		var profiled chan error
		if pprofAddr != "" {
			profiled = make(chan error, 1)
			file := filepath.Join(cfg.profileDir, fmt.Sprintf("%s.%s.r%d.c%d.cpu.pprof", shape, a.name, round, c))
			secs := cmp.Or(os.Getenv("REVOPS_COST_PROFILE_SECONDS"), "8")
			go func() {
				if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
					profiled <- err
					return
				}
				profiled <- fetchProfile("http://"+pprofAddr+"/debug/pprof/profile?seconds="+secs, file)
			}()
		}
		r := ph.run(t, c, cfg.changes)
		if profiled != nil {
			if err := <-profiled; err != nil {
				t.Errorf("profile: %v", err)
			}
		}
		r.shape, r.arm, r.round = shape, a.name, round
		fmt.Println(r.line())
		rows = append(rows, r)
	}
	return rows
}

// freeLoopback is a loopback address nothing listens on.
func freeLoopback(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// costClient sends changes: one request each, no Idempotency-Key, no retry (the rate
// limits are off: any answer but a 2xx is a failure of the measurement).
type costClient struct {
	hc       *http.Client
	url, key string
}

func (c *costClient) do(ctx context.Context, method, path string, body any) (map[string]any, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, rb)
	}
	var obj map[string]any
	if err := json.Unmarshal(rb, &obj); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", method, path, err, rb)
	}
	return obj, nil
}

type costPhase struct {
	cfg      costConfig
	rc       *costReceiver
	cl       *costClient
	accounts []string
	procs    []costProc
}

// run sends n changes from len(accounts) open-load clients and waits for every webhook.
func (ph costPhase) run(t testing.TB, clients, n int) costRow {
	t.Helper()
	ph.settle(t) // the previous phase's runs have finished
	tag := ph.rc.begin(n)
	cpu0 := ph.readCPU(t)
	busy0 := machineBusy()
	self0 := selfCPU()
	began := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstErr := closedLoop(ctx, clients, n, func(ctx context.Context, i, k int) error {
		key := tag + strconv.Itoa(k)
		ph.rc.sent(key, time.Now())
		_, err := ph.cl.do(ctx, "PATCH", "/v1/accounts/"+ph.accounts[i], map[string]any{"name": key})
		return err
	})
	if firstErr != nil {
		t.Fatalf("phase %s: %v", tag, firstErr)
	}
	accepted := time.Now()
	deadline := time.After(ph.cfg.phaseTimeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-ph.rc.done:
			waiting = false
		case <-tick.C:
			for _, p := range ph.procs {
				if err := p.alive(); err != nil {
					t.Fatalf("phase %s: %v", tag, err)
				}
			}
		case <-deadline:
			t.Fatalf("phase %s: %d of %d webhooks arrived within %s (REVOPS_COST_PHASE_TIMEOUT)", tag, ph.rc.arrived(), n, ph.cfg.phaseTimeout)
		}
	}
	wall := ph.rc.last().Sub(began)
	harness := selfCPU() - self0
	cpu1, tail := ph.settle(t)
	r := costRow{clients: clients, n: n, wall: wall, accept: accepted.Sub(began), tail: tail, harness: harness,
		machine: machineBusy() - busy0, load: noisyload.Loadavg()}
	r.lats, r.dups = ph.rc.result()
	for _, p := range ph.procs {
		r.procs = append(r.procs, p.name)
		r.cpu = append(r.cpu, cpu1[p.name]-cpu0[p.name])
	}
	return r
}

// quietCPU is the stack's CPU use, all measured processes together, under which it counts
// as idle: 10 % of one core (idle, the stacks use 1–3 %; finishing runs, most of a core).
const quietCPU = 0.10

// settle waits until the stack is idle (a 500 ms window under quietCPU) and returns the
// reading at the start of that window and how long it waited. A delivery's run goes on
// after its webhook (the attempt's completion, the run's last workflow task, its history
// and visibility writes): ending the phase when the stack is idle again counts all of it,
// and no phase's leftovers fall into the next.
func (ph costPhase) settle(t testing.TB) (map[string]time.Duration, time.Duration) {
	t.Helper()
	const window = 500 * time.Millisecond
	began := time.Now()
	prev := ph.readCPU(t)
	for {
		time.Sleep(window)
		cur := ph.readCPU(t)
		var used time.Duration
		for name, d := range cur {
			used += d - prev[name]
		}
		if used <= time.Duration(quietCPU*float64(window)) {
			return prev, time.Since(began) - window
		}
		if time.Since(began) > 2*time.Minute {
			t.Fatalf("the stack did not become idle within 2 minutes (%s CPU in the last %s)", used, window)
		}
		prev = cur
	}
}

func (ph costPhase) readCPU(t testing.TB) map[string]time.Duration {
	t.Helper()
	m := map[string]time.Duration{}
	for _, p := range ph.procs {
		d, err := p.cpu()
		if err != nil {
			t.Fatalf("CPU of %s: %v", p.name, err)
		}
		m[p.name] = d
	}
	return m
}

// machineBusy is the CPU time every process on the machine has used (/proc/stat's user,
// nice, system, irq and softirq): a check on the measured sum, which it bounds from above
// (it holds this process and whatever else the machine runs).
func machineBusy() time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var busy int64
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseInt(f, 10, 64)
		if i <= 2 || i == 5 || i == 6 { // user nice system (idle iowait) irq softirq
			busy += v
		}
	}
	return time.Duration(busy) * 10 * time.Millisecond
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// costReceiver is the endpoint: it acknowledges every request at once, and times the
// arrival of each change of the current phase by the key the change put in the account's
// name (which the account-updated body carries).
type costReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	phase   int
	tag     string
	want    int
	pending map[string]time.Time // key → sent, until its webhook arrives
	lats    []time.Duration
	ids     map[string]int // event id (webhook-id) → deliveries received
	lastAt  time.Time
	done    chan struct{}
}

var costKey = regexp.MustCompile(`ck[0-9]+-[0-9]+`)

func newCostReceiver(t testing.TB) *costReceiver {
	rc := &costReceiver{}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.arrive(r.Header.Get("webhook-id"), costKey.FindString(string(body)), time.Now())
		_, _ = io.WriteString(w, webhooktest.AckSentence)
	}))
	rc.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.StartTLS()
	t.Cleanup(rc.Close)
	return rc
}

// begin starts a phase of n changes; it returns the prefix of the phase's keys.
func (rc *costReceiver) begin(n int) string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.phase++
	rc.tag = fmt.Sprintf("ck%d-", rc.phase)
	rc.want, rc.pending, rc.lats, rc.ids, rc.done = n, map[string]time.Time{}, nil, map[string]int{}, make(chan struct{})
	return rc.tag
}

func (rc *costReceiver) sent(key string, at time.Time) {
	rc.mu.Lock()
	rc.pending[key] = at
	rc.mu.Unlock()
}

func (rc *costReceiver) arrive(id, key string, at time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !strings.HasPrefix(key, rc.tag) {
		return // another phase's, or no change's (account-created)
	}
	rc.ids[id]++
	sent, ok := rc.pending[key]
	if !ok {
		return // a second delivery of the same change
	}
	delete(rc.pending, key)
	rc.lats = append(rc.lats, at.Sub(sent))
	rc.lastAt = at
	if len(rc.lats) == rc.want {
		close(rc.done)
	}
}

func (rc *costReceiver) arrived() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.lats)
}

func (rc *costReceiver) last() time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.lastAt
}

// result is the phase's latencies, sorted, and how many deliveries came more than once.
func (rc *costReceiver) result() ([]time.Duration, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	lats := slices.Clone(rc.lats)
	slices.Sort(lats)
	dups := 0
	for _, n := range rc.ids {
		dups += n - 1
	}
	return lats, dups
}

// costRow is one measured phase.
type costRow struct {
	shape, arm     string
	round, clients int
	n              int
	wall, accept   time.Duration
	tail           time.Duration // from the last webhook to the stack idle (its CPU counted)
	lats           []time.Duration
	dups           int
	procs          []string
	cpu            []time.Duration // per process, as procs
	harness        time.Duration   // this process's CPU (not counted)
	machine        time.Duration   // every process's on the machine, others' included (not counted)
	load           string
}

func (r costRow) perSecond() float64 { return float64(r.n) / r.wall.Seconds() }

func (r costRow) pct(q float64) float64 {
	i := int(float64(len(r.lats))*q+0.999999) - 1
	return msOf(r.lats[max(0, min(i, len(r.lats)-1))])
}

// perDelivery is CPU ms per delivery of process name ("total": all of them).
func (r costRow) perDelivery(name string) float64 {
	var d time.Duration
	for i, p := range r.procs {
		if name == "total" || p == name {
			d += r.cpu[i]
		}
	}
	return msOf(d) / float64(r.n)
}

func (r costRow) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s r%d %-10s c=%-3d %5d in %6.1fs: %6.1f deliveries/s (accepted %6.1f/s), p50 %7.0f ms p99 %7.0f ms; CPU ms/delivery",
		r.shape, r.round, r.arm, r.clients, r.n, r.wall.Seconds(), r.perSecond(), float64(r.n)/r.accept.Seconds(), r.pct(0.5), r.pct(0.99))
	for _, p := range r.procs {
		fmt.Fprintf(&b, " %s %.2f", p, r.perDelivery(p))
	}
	fmt.Fprintf(&b, " total %.2f (not counted: harness %.2f, whole machine %.2f); idle %.1fs after the last webhook; dups %d; load %s",
		r.perDelivery("total"), msOf(r.harness)/float64(r.n), msOf(r.machine)/float64(r.n), r.tail.Seconds(), r.dups, r.load)
	return b.String()
}

// costSummary is a markdown table per shape: each arm's range over the rounds per client
// count, and the ratio of its mean to the base arm's (the first).
func costSummary(cfg costConfig, rows []costRow) string {
	var b strings.Builder
	base := cfg.arms[0].name
	fmt.Fprintf(&b, "\n## Delivery cost: %s; %d changes per phase, %d rounds (A/B/B/A), %d CPUs\n",
		cfg.armList(), cfg.changes, cfg.rounds, runtime.NumCPU())
	for _, shape := range cfg.shapes {
		var procs []string
		for _, r := range rows {
			if r.shape == shape {
				procs = r.procs
				break
			}
		}
		if procs == nil {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n| clients | arm | deliveries/s | p50 ms | p99 ms | CPU ms/delivery |", shape)
		for _, p := range procs {
			fmt.Fprintf(&b, " %s |", p)
		}
		fmt.Fprintf(&b, " CPU ÷ %s | deliveries/s ÷ %s |\n|---|---|---|---|---|---|", base, base)
		for range procs {
			b.WriteString("---|")
		}
		b.WriteString("---|---|\n")
		for _, c := range cfg.clients {
			of := func(arm string) []costRow {
				var out []costRow
				for _, r := range rows {
					if r.shape == shape && r.clients == c && r.arm == arm {
						out = append(out, r)
					}
				}
				return out
			}
			baseRows := of(base)
			for _, a := range cfg.arms {
				rs := of(a.name)
				if len(rs) == 0 {
					continue
				}
				fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | **%s** |", c, a.name,
					span(rs, costRow.perSecond, 1), span(rs, func(r costRow) float64 { return r.pct(0.5) }, 0),
					span(rs, func(r costRow) float64 { return r.pct(0.99) }, 0),
					span(rs, func(r costRow) float64 { return r.perDelivery("total") }, 1))
				for _, p := range procs {
					fmt.Fprintf(&b, " %s |", span(rs, func(r costRow) float64 { return r.perDelivery(p) }, 1))
				}
				total := func(r costRow) float64 { return r.perDelivery("total") }
				fmt.Fprintf(&b, " %s | %s |\n", ratio(rs, baseRows, total), ratio(rs, baseRows, costRow.perSecond))
			}
		}
	}
	return b.String()
}

// span is "min–max" of f over rows (one figure when they agree at this precision).
func span(rows []costRow, f func(costRow) float64, prec int) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	a, z := strconv.FormatFloat(lo, 'f', prec, 64), strconv.FormatFloat(hi, 'f', prec, 64)
	if a == z {
		return a
	}
	return a + "–" + z
}

// ratio is mean(f over rows) ÷ mean(f over base).
func ratio(rows, base []costRow, f func(costRow) float64) string {
	mean := func(rs []costRow) float64 {
		s := 0.0
		for _, r := range rs {
			s += f(r)
		}
		return s / float64(len(rs))
	}
	if len(base) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", mean(rows)/mean(base))
}

// TestCostArmsSyntax checks the arm syntax BenchmarkDeliveryCost reads.
func TestCostArmsSyntax(t *testing.T) {
	arms, err := parseArms("old=acfe645,new=.,pgx=.:temporal.plugin=postgres12_pgx:temporal.shards=8:REVOPS_X=a=b:cost.filter=4k")
	if err != nil {
		t.Fatal(err)
	}
	if len(arms) != 3 || arms[0].name != "old" || arms[0].rev != "acfe645" || arms[1].rev != "." ||
		arms[2].opts.TemporalPlugin != "postgres12_pgx" || arms[2].opts.HistoryShards != 8 ||
		!slices.Equal(arms[2].env, []string{"REVOPS_X=a=b"}) || arms[1].filter || !arms[2].filter {
		t.Fatalf("parsed %+v", arms)
	}
	for _, bad := range []string{"old", "=x", "a=", "a=.:temporal.plugin=mysql8", "a=.:temporal.shards=0", "a=.:lower=x", "a=.,a=HEAD", "a=.:cost.filter=8k"} {
		if _, err := parseArms(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

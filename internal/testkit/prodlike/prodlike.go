// Package prodlike runs Revops in its production shape for tests (CONTRACT §16): a
// PostgreSQL cluster of its own, a Temporal server on it (built from go.temporal.io/server
// at the version go.mod pins, schema by temporal-sql-tool, the dynamic config we ship in
// deploy/temporal), then `revops migrate`, `revops temporal-setup`, and any number of
// `revops api` (HTTPS) and `revops worker` processes — the order the README's production
// section gives. Everything listens on loopback; the processes are real binaries, so a
// test can SIGKILL them, and restart Temporal and PostgreSQL under them.
package prodlike

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/localca"
	"github.com/revops/revops/internal/testkit/testdb"
)

// Options change what the Revops processes are started with.
type Options struct {
	// RetryInterval is REVOPS_WEBHOOK_RETRY_INTERVAL (default 2s: the test waits for
	// retries, it does not wait hours).
	RetryInterval time.Duration
	// Env adds settings (NAME=value: REVOPS_*, OTEL_*) to every Revops process.
	Env []string
	// DynamicConfig replaces the Temporal dynamic config we ship
	// (deploy/temporal/dynamicconfig.yaml), to measure what it changes.
	DynamicConfig string
	// Revops is a revops binary to run instead of building ./cmd/revops of this tree
	// (a measurement comparing commits builds each; BuildRevopsAt).
	Revops string
	// TemporalPlugin is the Temporal server's SQL persistence plugin for both its
	// databases and temporal-sql-tool (default postgres12_pgx, as the compose file ships
	// it: it prepares each statement once, CONTRACT §22; postgres12 is the other).
	TemporalPlugin string
	// HistoryShards is the Temporal cluster's numHistoryShards (default 4). It is fixed
	// when a cluster's database is created: every stack creates its own.
	HistoryShards int
	// DurablePostgres runs the cluster with PostgreSQL's own fsync and full_page_writes
	// (on), as docker-compose.yml deploys it, instead of the tests' off: a measurement of
	// what a commit costs counts its WAL flushes.
	DurablePostgres bool
}

// temporalDefaults fills the Temporal settings Options leaves empty.
func (o Options) temporalDefaults() Options {
	if o.TemporalPlugin == "" {
		o.TemporalPlugin = "postgres12_pgx"
	}
	if o.HistoryShards == 0 {
		o.HistoryShards = 4
	}
	return o
}

// Stack is a running production-shaped stack.
type Stack struct {
	Dir      string // logs, configuration, the PostgreSQL cluster
	Bins     Binaries
	PG       *Postgres
	Temporal *Temporal
	// DatabaseURL is Revops' database on PG.
	DatabaseURL string

	t     testing.TB
	root  string
	env   []string // every Revops process's environment
	ca    *localca.CA
	mu    sync.Mutex
	procs []*Proc
	n     int
}

// Require skips the test when the production shape cannot run here, and fails it in CI
// (CI=true) where it must run: PostgreSQL's server binaries and a test PostgreSQL (whose
// presence says the suite runs against real infrastructure, as every database test).
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("prodlike: skipped with -short (it builds and starts a Temporal cluster)")
	}
	if os.Getenv(testdb.EnvVar) == "" {
		t.Skipf("prodlike: %s is not set; run ./scripts/test", testdb.EnvVar)
	}
	if _, err := PostgresBinDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("prodlike: CI must run the production-shape test: %v", err)
		}
		t.Skipf("\n\n*** prodlike: SKIPPED, the production-shape test did not run: %v ***\n", err)
	}
}

// Start builds the binaries and starts PostgreSQL and Temporal, then runs `revops
// migrate` and `revops temporal-setup`. API and worker processes are started by the
// test (StartAPI, StartWorker). Everything stops at cleanup.
func Start(t testing.TB, opts Options) *Stack {
	t.Helper()
	Require(t)
	opts = opts.temporalDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: the postgres user must reach the cluster's directory, and test
	// temp dirs sit under root-only parents.
	reapStale()
	dir, err := os.MkdirTemp("", "revops-prodlike-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Stack{Dir: dir, t: t, root: root}
	t.Cleanup(s.stop)

	began := time.Now()
	s.Bins, err = build(ctx, root, dir, opts.Revops)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prodlike: binaries ready in %s (Temporal server %s; built: %s)", since(began), s.Bins.ServerVersion, strings.Join(s.Bins.Built, ", "))

	step := time.Now()
	binDir, err := PostgresBinDir()
	if err != nil {
		t.Fatal(err)
	}
	port, err := freeLowPorts(1)
	if err != nil {
		t.Fatal(err)
	}
	s.PG, err = newPostgres(binDir, dir, port[0], opts.DurablePostgres)
	if err != nil {
		t.Fatalf("prodlike: PostgreSQL: %v", err)
	}
	if err := s.PG.CreateDatabase("revops"); err != nil {
		t.Fatal(err)
	}
	s.DatabaseURL = s.PG.URL("revops")
	if err := createTemporalSchema(s.Bins.SQLTool, opts.TemporalPlugin, s.PG, []string{"PATH=/usr/bin:/bin", "HOME=" + dir}); err != nil {
		t.Fatal(err)
	}
	t.Logf("prodlike: PostgreSQL %s on 127.0.0.1:%d with Temporal's schema in %s", filepath.Base(filepath.Dir(binDir)), s.PG.Port, since(step))

	step = time.Now()
	dynamic := filepath.Join(root, "deploy", "temporal", "dynamicconfig.yaml")
	if opts.DynamicConfig != "" {
		dynamic = opts.DynamicConfig
	}
	// The server ignores unknown keys with a warning: refuse them here instead.
	if out, err := run(nil, nil, dir, s.Bins.TemporalServer, "validate-dynamic-config", dynamic); err != nil || strings.Contains(out, "warning:") {
		t.Fatalf("prodlike: %s is not a valid dynamic config: %v\n%s", dynamic, err, out)
	}
	s.Temporal, err = newTemporal(s.Bins.TemporalServer, dir, dynamic, s.PG.Port, opts.TemporalPlugin, opts.HistoryShards)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Temporal.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("prodlike: Temporal server on %s in %s (dynamic config %s, plugin %s, %d history shards)", s.Temporal.Address, since(step), dynamic, opts.TemporalPlugin, opts.HistoryShards)

	if err := s.setupCA(); err != nil {
		t.Fatal(err)
	}
	interval := opts.RetryInterval
	if interval == 0 {
		interval = 2 * time.Second
	}
	s.env = append([]string{
		"PATH=/usr/bin:/bin",
		"HOME=" + dir,
		"REVOPS_DATABASE_URL=" + s.DatabaseURL,
		"REVOPS_TEMPORAL_ADDRESS=" + s.Temporal.Address,
		"REVOPS_TEMPORAL_NAMESPACE=default",
		"REVOPS_WEBHOOK_RETRY_INTERVAL=" + interval.String(),
		"REVOPS_METRICS_ADDR=127.0.0.1:0",
		"REVOPS_LOG_LEVEL=info",
		// The key the test's own stores share (testdb.Keys), so that they read what the
		// processes seal (CONTRACT §25).
		"REVOPS_ENCRYPTION_KEYS=" + testdb.Keys(),
	}, opts.Env...)

	step = time.Now()
	out, err := s.Revops("migrate")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prodlike: revops migrate in %s: %s", since(step), lastLine(out))
	step = time.Now()
	if out, err = s.Revops("temporal-setup"); err != nil {
		t.Fatal(err)
	}
	t.Logf("prodlike: revops temporal-setup in %s: %s; stack up %s after start", since(step), lastLine(out), since(began))
	return s
}

// Revops runs a revops command to completion with the stack's environment.
func (s *Stack) Revops(args ...string) (string, error) {
	return run(s.env, nil, s.Dir, s.Bins.Revops, args...)
}

func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

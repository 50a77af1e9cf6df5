package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
	"github.com/revops/revops/workflows/wire"
)

// benchRig is the whole production path of a delivery on one machine: the API over
// PostgreSQL with the real Starter as dispatcher, the embedded Temporal stack, the real
// worker and an HTTPS receiver. The floor's no-op workflow runs on the same worker.
type benchRig struct {
	st     *store.Store
	env    models.Env
	key    string
	ep     models.WebhookEndpoint // the first (oldest) endpoint
	api    *httptest.Server       // with the Starter as dispatcher
	setup  *httptest.Server       // without dispatcher: pre-created deals send nothing
	http   *http.Client           // keep-alive client of both APIs
	tc     client.Client
	sender *webhook.Sender
	rc     *benchReceiver   // rcs[0]
	rcs    []*benchReceiver // one HTTPS receiver per endpoint
	deals  []string
	sample string // a real webhook body, the direct POSTs' template
	// scratch is a second pool on the rig's database for the floor+io baseline's writes.
	scratch  *gorm.DB
	database string // the rig's PostgreSQL database (its backends' CPU is measured)
	url      string // its URL (the setup API's store opens it too)
	// respLats are the API's response times of the running "ours" phase, by change.
	respLats []time.Duration
	// warnings counts the API's warnings (its log is not printed).
	warnings *warnCounter
}

// warnCounter is a slog handler that prints nothing and counts warnings by message.
type warnCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (w *warnCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w *warnCounter) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[string]int{}
	}
	w.n[r.Message]++
	return nil
}

func (w *warnCounter) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnCounter) WithGroup(string) slog.Handler      { return w }

// counts is a copy of the counts so far.
func (w *warnCounter) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.n)
}

func newBenchRig(b *testing.B, nDeals int) *benchRig { return newFanoutRig(b, nDeals, 1) }

// newFanoutRig is the rig with nEndpoints endpoints subscribed to every event type, each
// on its own HTTPS receiver: every change is delivered nEndpoints times.
func newFanoutRig(b *testing.B, nDeals, nEndpoints int) *benchRig {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := &benchRig{warnings: &warnCounter{}}
	quiet := slog.New(r.warnings)
	// With OTEL_* set, the rig traces as a process of Revops would (docs/benchmarks.md:
	// the cost of tracing per delivery); without, tracing stays off, as by default.
	tr, err := tracing.Start(ctx, os.Getenv, "revops-bench", func(w string) { b.Log(w) })
	if err != nil {
		b.Fatal(err)
	}
	if tr != nil {
		b.Logf("tracing on: %s", tr.Describe())
		b.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	}
	stack, err := devstack.Start(ctx, devstack.Options{
		DataDir: b.TempDir(), FrontendAddr: "127.0.0.1:0", UIAddr: "", Namespace: "default",
		SearchAttributes: wire.SearchAttributes,
		Logger:           slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		b.Fatalf("devstack: %v", err)
	}
	b.Cleanup(func() { _ = stack.Stop() })
	addEndpointIDsAttribute(b, stack.FrontendAddr(), "default")
	url := testdb.URL(b)
	r.st, r.scratch, r.database, r.url = testdb.Open(b, url), openScratch(b, url), databaseOf(b, url), url
	for range nEndpoints {
		r.rcs = append(r.rcs, newBenchReceiver(b))
	}
	r.rc = r.rcs[0]
	opts := client.Options{HostPort: stack.FrontendAddr(), Namespace: "default",
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if tracing.On() {
		opts.Interceptors = append(opts.Interceptors, tracing.TemporalInterceptor())
	}
	r.tc, err = client.Dial(opts)
	if err != nil {
		b.Fatalf("dial temporal: %v", err)
	}
	b.Cleanup(r.tc.Close)
	r.tenant(ctx, b)
	r.sender = &webhook.Sender{Client: webhook.NewClientWithRoots(true, r.roots()),
		AckSentence: webhooktest.AckSentence, Timeout: 30 * time.Second}
	r.worker(b)
	r.apis(b, quiet)
	r.createDeals(b, nDeals)
	return r
}

// openScratch opens a pool like the store's on the rig's database, with the table the
// floor+io baseline writes its outbox and attempt rows to.
func openScratch(b *testing.B, url string) *gorm.DB {
	db, err := gorm.Open(postgres.Open(url), &gorm.Config{Logger: logger.Discard, SkipDefaultTransaction: true})
	if err != nil {
		b.Fatalf("scratch pool: %v", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		b.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(16)
	sqlDB.SetMaxIdleConns(16)
	b.Cleanup(func() { _ = sqlDB.Close() })
	if err := db.Exec(`CREATE TABLE bench_io (id text PRIMARY KEY, status text NOT NULL, body text, at timestamptz NOT NULL)`).Error; err != nil {
		b.Fatalf("scratch table: %v", err)
	}
	return db
}

func databaseOf(b *testing.B, raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// sandboxOf creates organization name (owned by email) and its secret sandbox key, and
// returns the key and the sandbox environment.
func (r *benchRig) sandboxOf(ctx context.Context, b *testing.B, name, email string) (string, models.Env) {
	org, _, err := orgs.Create(ctx, r.st, name, email)
	if err != nil {
		b.Fatal(err)
	}
	k, err := keys.NewManager(r.st).Create(ctx, org.ID, models.EnvSandbox, "secret")
	if err != nil {
		b.Fatal(err)
	}
	env, err := r.st.Environment(ctx, org.ID, models.EnvSandbox)
	if err != nil {
		b.Fatal(err)
	}
	return k.Plain, env
}

// endpointTo creates an enabled POST endpoint of env to url, signed with a fixed secret
// (the benchmarks measure the signing's cost only).
func (r *benchRig) endpointTo(ctx context.Context, b *testing.B, env models.Env, url string) models.WebhookEndpoint {
	ep, err := webhook.CreateEndpoint(ctx, r.st, env, models.WebhookEndpoint{URL: url, Method: "POST", Enabled: true,
		Secret: "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, time.Now(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		b.Fatal(err)
	}
	return ep
}

// tenant creates the organization, its secret sandbox key and the webhook endpoint.
func (r *benchRig) tenant(ctx context.Context, b *testing.B) {
	r.key, r.env = r.sandboxOf(ctx, b, "Bench", "bench@acme.test")
	r.ep = r.endpointTo(ctx, b, r.env, r.rc.URL+"/hooks")
	for _, rc := range r.rcs[1:] {
		r.endpointTo(ctx, b, r.env, rc.URL+"/hooks")
	}
}

// roots trusts the rig's receivers only.
func (r *benchRig) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	for _, rc := range r.rcs {
		pool.AddCert(rc.Certificate())
	}
	return pool
}

// worker runs the production registration (and options) plus the floor's no-op pair.
func (r *benchRig) worker(b *testing.B) {
	opts := worker.Options{}
	// REVOPS_BENCH_WFT_POLLERS tries another number of workflow-task pollers (SDK
	// default 2) on ours and the floors alike.
	if v, err := strconv.Atoi(os.Getenv("REVOPS_BENCH_WFT_POLLERS")); err == nil && v > 0 {
		opts.MaxConcurrentWorkflowTaskPollers = v
	}
	// REVOPS_WORKER_ACTIVITY_SLOTS (CONTRACT §17), when set, gives the rig's worker the
	// activity slots it gives `revops worker` (the noisy-neighbour measurement).
	slots := config.DefaultWorkerActivitySlots
	if v, err := strconv.Atoi(os.Getenv("REVOPS_WORKER_ACTIVITY_SLOTS")); err == nil && v > 0 {
		slots = v
	}
	ws := workflows.NewWorkers(r.tc, workflows.Activities{
		Delivery:   &activities.Delivery{Store: r.st, Sender: r.sender},
		Retention:  &activities.Retention{Store: r.st},
		BulkReplay: &activities.BulkReplay{Store: r.st},
		// Meter jobs on the job pool, as `revops worker` runs them (the tenant-isolation
		// benchmark's heavy tenant; no other benchmark creates meters).
		MeterBackfill: &activities.MeterBackfill{Store: r.st.OnJobsPool()},
		MeterPurge:    &activities.MeterPurge{Store: r.st.OnJobsPool()},
	}, slots, opts)
	w := ws[0] // revops-webhooks
	w.RegisterWorkflowWithOptions(benchNoopWorkflow, workflow.RegisterOptions{Name: "BenchNoop"})
	w.RegisterWorkflowWithOptions(benchFanWorkflow, workflow.RegisterOptions{Name: "BenchFan"})
	w.RegisterActivity(&benchNoop{r: r})
	if err := ws.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ws.Stop)
}

func (r *benchRig) apis(b *testing.B, log *slog.Logger) {
	cfg := apitest.Config(b)
	// The measured API starts runs through the start queue, as in `revops serve`; new
	// meters' backfills and deleted meters' purges start at once: the rig's store hands
	// what every change commits to them (store.AfterCommit), as internal/app wires it.
	d := apitest.Deps(cfg, r.st)
	d.Log = log
	q := apitest.Queue(&d, &dispatch.Starter{Client: r.tc, Store: r.st, Log: log})
	r.st.SetAfterCommit(dispatch.AfterCommit{Events: q, Jobs: &dispatch.Jobs{Client: r.tc, Store: r.st, Log: log}})
	r.api = apitest.Serve(b, d)
	// The setup API starts nothing: its events wait for the sweeper. It serves from a
	// store of its own on the same database, to which nothing is handed after commit.
	setupStore := testdb.OpenWith(b, r.url, store.Options{Connections: 8, JobConnections: 1, LockTimeout: 2 * time.Second})
	setup := apitest.Deps(cfg, setupStore)
	setup.Log = log
	r.setup = apitest.Serve(b, setup)
	r.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

// call sends one JSON request with the secret key and decodes the answer into out.
func (r *benchRig) call(base, method, path string, body, out any) error {
	return r.callAs(r.key, base, method, path, body, out)
}

// callAs is call with another environment's key.
func (r *benchRig) callAs(key, base, method, path string, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, got)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(got, out)
}

// createDeals makes the draft deals the benchmark PATCHes, through the API without
// dispatcher (their deal-created events are never sent: no sweeper runs here).
// Ten deals per account: a change locks its deal's account (FOR UPDATE) until commit,
// so changes to deals of one customer are serialised; the benchmark spreads them the way
// many customers would.
func (r *benchRig) createDeals(b *testing.B, n int) {
	r.deals = r.createDealsAs(b, r.key, n)
}

// createDealsAs makes n draft deals in the environment of key, as createDeals says.
func (r *benchRig) createDealsAs(b *testing.B, key string, n int) []string {
	accounts := make([]string, (n+9)/10)
	err := parallel(8, len(accounts), func(k int) error {
		var acc struct{ ID string }
		err := r.callAs(key, r.setup.URL, "POST", "/v1/accounts", map[string]any{"name": "Bench Co " + strconv.Itoa(k)}, &acc)
		accounts[k] = acc.ID
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	deals := make([]string, n)
	err = parallel(8, n, func(k int) error {
		var d struct{ ID string }
		err := r.callAs(key, r.setup.URL, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": accounts[k%len(accounts)]}}, &d)
		deals[k] = d.ID
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return deals
}

// parallel runs f(0..n-1) on conc goroutines, each taking the next index when done.
func parallel(conc, n int, f func(k int) error) error {
	var mu sync.Mutex
	next, firstErr := 0, error(nil)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || firstErr != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k, ok := take(); ok; k, ok = take() {
				if err := f(k); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// benchReceiver acknowledges every request and wakes whoever waits for its key: the
// deal's opportunity_id in a webhook body, the "key" member of a direct POST, or the
// floor's workflow id (signalled by the no-op activity, no HTTP).
type benchReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	waiters map[string]chan time.Time
	ids     map[string]string // key → webhook-id
}

func newBenchReceiver(b *testing.B) *benchReceiver {
	rc := &benchReceiver{waiters: map[string]chan time.Time{}, ids: map[string]string{}}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut by Close at the end
	rc.StartTLS()
	b.Cleanup(rc.Close)
	return rc
}

func (rc *benchReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	at := time.Now()
	var msg struct {
		Key  string `json:"key"`
		Deal struct {
			OpportunityID string `json:"opportunity_id"`
		} `json:"deal"`
	}
	_ = json.Unmarshal(body, &msg)
	key := msg.Key
	if key == "" {
		key = msg.Deal.OpportunityID
	}
	rc.arrived(key, r.Header.Get("webhook-id"), at)
	_, _ = io.WriteString(w, "ok: "+webhooktest.AckSentence)
}

// expect registers a waiter before the change is made, so no arrival is missed.
func (rc *benchReceiver) expect(key string) chan time.Time {
	ch := make(chan time.Time, 1)
	rc.mu.Lock()
	rc.waiters[key] = ch
	rc.mu.Unlock()
	return ch
}

func (rc *benchReceiver) arrived(key, webhookID string, at time.Time) {
	rc.mu.Lock()
	ch := rc.waiters[key]
	delete(rc.waiters, key)
	if webhookID != "" {
		rc.ids[key] = webhookID
	}
	rc.mu.Unlock()
	if ch != nil {
		ch <- at
	}
}

func (rc *benchReceiver) webhookID(key string) string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.ids[key]
}

// Roots trusts this receiver's certificate only.
func (rc *benchReceiver) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(rc.Certificate())
	return pool
}

// benchNoopWorkflow is the floor: one activity that does nothing but report.
func benchNoopWorkflow(ctx workflow.Context, key string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: wire.AttemptTimeout})
	var a *benchNoop
	return workflow.ExecuteActivity(ctx, a.BenchNoopActivity, key).Get(ctx, nil)
}

type benchNoop struct{ r *benchRig }

func (n *benchNoop) BenchNoopActivity(_ context.Context, key string) error {
	n.r.rc.arrived(key, "", time.Now())
	return nil
}

// benchFanInput is the fan-out floor's input: N activities run concurrently, the i-th
// reporting to receiver i. Without IO they do nothing else (the literal floor); with IO
// each does what the contract requires of any delivery attempt, and no more: read its
// delivery's status (not already delivered?), a signed HTTPS POST of the event's body
// to receiver i, then one PostgreSQL commit recording the attempt and the status.
type benchFanInput struct {
	Key string
	N   int
	IO  bool
}

// benchFanWorkflow is the floor of the fan-out: the shape of WebhookDelivery's fan-out
// run (one workflow task scheduling N activities, one completing it). With IO it also
// asks one change version, as the issue requires of the fan-out (runs of the previous
// release keep their code path through workflow.GetVersion): the SDK records a marker
// and upserts TemporalChangeVersion, a visibility write on the server.
func benchFanWorkflow(ctx workflow.Context, in benchFanInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: wire.AttemptTimeout})
	if in.IO {
		_ = workflow.GetVersion(ctx, "bench-fanout", workflow.DefaultVersion, 1)
	}
	var a *benchNoop
	futs := make([]workflow.Future, in.N)
	for i := range in.N {
		futs[i] = workflow.ExecuteActivity(ctx, a.BenchFanActivity, in.Key, i, in.IO)
	}
	for _, f := range futs {
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// BenchFanActivity reports key to receiver i: with io by a signed HTTPS POST, checked
// before and recorded after as benchFanInput says, else directly (no HTTP, no database).
func (n *benchNoop) BenchFanActivity(ctx context.Context, key string, i int, io bool) error {
	if !io {
		n.r.rcs[i].arrived(key, "", time.Now())
		return nil
	}
	// CONTRACT §10: an attempt first checks that its delivery is not delivered already.
	delivery := key + "/d" + strconv.Itoa(i)
	var status string
	if err := n.r.scratch.WithContext(ctx).Raw("SELECT status FROM bench_io WHERE id = ?", delivery).Scan(&status).Error; err != nil {
		return err
	}
	if status == "delivered" {
		return nil
	}
	now := time.Now()
	res := n.r.sender.Send(ctx, webhook.Message{
		URL: n.r.rcs[i].URL + "/hooks", Method: "POST", ID: key, At: now,
		Body:    []byte(`{"key":"` + key + `",` + n.r.sample[1:]),
		Secrets: webhook.SigningSecrets(n.r.ep, now),
	})
	if !res.OK() {
		return fmt.Errorf("floor POST: %s", res.Reason)
	}
	// One commit: the attempt and its delivery's status.
	return n.r.scratch.WithContext(ctx).Exec(`WITH attempt AS (INSERT INTO bench_io (id, status, at) VALUES (?, 'delivered', ?))
		UPDATE bench_io SET status = 'delivered', at = ? WHERE id = ?`, delivery+"/a", now, now, delivery).Error
}

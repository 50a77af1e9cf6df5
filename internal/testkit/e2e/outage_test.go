package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
	"github.com/revops/revops/internal/testkit/syncbuf"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// CONTRACT §10, issue 13's acceptance: with Temporal stopped, `revops serve` (its real
// wiring, app.Run with a lazy client, as cmd/revops runs it) starts and serves; a create
// answers 201 and leaves its event in the outbox; /readyz answers 200 naming Temporal
// unreachable; a replay answers 503 at once; the gauge and one log line say so. Once a
// Temporal server comes up at the configured address, the worker that could not start
// connects, the sweeper starts the event and it is delivered to a real HTTPS receiver.
func TestServeWithoutTemporalDeliversOnceItReturns(t *testing.T) {
	db := webhooktest.New(t)
	rc := webhooktest.NewReceiver(t)
	ctx := context.Background()
	key := endpointAndKey(t, db, rc.URL+"/hooks")
	caFile := filepath.Join(t.TempDir(), "receiver.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	temporalAddr := freeAddr(t) // nothing listens there until the Temporal server starts below
	cfg, err := config.Load(flag.NewFlagSet("serve", flag.ContinueOnError), "serve", []string{
		"--http-addr", "127.0.0.1:0", "--metrics-addr", "", "--rate-limit", "0", "--env-rate-limit", "0",
		"--temporal-address", temporalAddr, "--webhook-retry-interval", "1s",
		"--webhook-ca-file", caFile, "--webhook-allow-private",
	})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tc, err := client.NewLazyClient(app.TemporalOptions(cfg, log))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()

	runCtx, stop := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.Run(runCtx, cfg, log, db.Store, tc, app.Parts{API: true, Worker: true, Ready: ready,
			SweepEvery: 200 * time.Millisecond, ProbeEvery: 200 * time.Millisecond, WorkerRetry: 500 * time.Millisecond})
	}()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("serve did not start without Temporal: %v", err)
	}
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve stopped with %v", err)
		}
	}()

	// Temporal away: the create answers and its event waits in the outbox.
	r := call(t, "POST", base+"/v1/accounts", key.Plain, `{"name":"Acme","external_id":"ext-acme"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create without Temporal: %d %s", r.status, r.body)
	}
	accountID, _ := r.json(t)["id"].(string)
	evs, err := db.Store.EventsForObject(ctx, db.Env, accountID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events of the account: %d (err %v), want 1", len(evs), err)
	}
	ev := evs[0]
	if ev.DispatchedAt != nil || ev.Status != models.EventPending {
		t.Fatalf("event dispatched while Temporal was unreachable: %+v", ev)
	}
	if got := readyChecks(t, base); got.status != http.StatusOK || got.temporal != "unreachable" || got.database != "up" {
		t.Fatalf("readyz without Temporal: %+v", got)
	}
	if v := metricstest.Scrape(t).Value(t, "revops_temporal_reachable"); v != 0 {
		t.Errorf("revops_temporal_reachable = %v without Temporal, want 0", v)
	}
	// A replay is decided in the database, never waiting for Temporal: the event's
	// delivery is still pending, so it is refused at once.
	r = call(t, "POST", base+"/v1/events/"+ev.ID+"/replay", key.Plain, "")
	if r.status != http.StatusConflict || r.errorCode(t) != "delivery_in_progress" {
		t.Fatalf("replay without Temporal: %d %s", r.status, r.body)
	}

	// Temporal comes up where the process expects it.
	stack, err := devstack.Start(ctx, devstack.Options{
		DataDir: t.TempDir(), FrontendAddr: temporalAddr, Namespace: cfg.TemporalNamespace,
		SearchAttributes: wire.SearchAttributes, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("start Temporal: %v", err)
	}
	defer func() { _ = stack.Stop() }()
	addEndpointIDsAttribute(t, temporalAddr, cfg.TemporalNamespace)

	waitFor(t, 3*time.Minute, "the event delivered after Temporal returned, and marked", func() bool {
		e := db.Load(t, ev.ID)
		return e.Status == models.EventDelivered && dispatchMarked(e)
	})
	got := rc.Received()
	if len(got) != 1 || got[0].Header.Get("webhook-id") != ev.ID {
		t.Fatalf("receiver got %d requests, want the event once", len(got))
	}
	if e := db.Load(t, ev.ID); e.DispatchedAt == nil || e.WorkflowID != wire.WorkflowID(ev.ID) {
		t.Errorf("event not marked dispatched: %+v", e)
	}
	waitFor(t, time.Minute, "readyz naming Temporal up", func() bool {
		return readyChecks(t, base).temporal == "up"
	})
	if v := metricstest.Scrape(t).Value(t, "revops_temporal_reachable"); v != 1 {
		t.Errorf("revops_temporal_reachable = %v with Temporal back, want 1", v)
	}
	out := logs.String()
	for _, line := range []string{`msg="worker cannot start`, `msg="worker connected to Temporal"`} {
		if n := strings.Count(out, line); n != 1 {
			t.Errorf("log line %q written %d times, want once:\n%s", line, n, out)
		}
	}
	// The health check logs transitions, not probes: each "unreachable" is followed by one
	// "reachable again", the last line says reachable. Usually that is one outage; a probe
	// that fails while the restarted server is still starting (or answers slowly on a
	// loaded machine) is a second, short one, and is logged as such.
	down, up := strings.Count(out, `msg="Temporal is unreachable`), strings.Count(out, `msg="Temporal is reachable again"`)
	if down < 1 || down != up || strings.LastIndex(out, `msg="Temporal is unreachable`) > strings.LastIndex(out, `msg="Temporal is reachable again"`) {
		t.Errorf("Temporal logged unreachable %d and reachable again %d times, want as many of each, reachable last:\n%s", down, up, out)
	}
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

type reply struct {
	status int
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("not JSON (%d): %s", r.status, r.body)
	}
	return m
}

func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func call(t *testing.T, method, url, key, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: res.StatusCode, body: b}
}

type readiness struct {
	status             int
	database, temporal string
}

func readyChecks(t *testing.T, base string) readiness {
	t.Helper()
	r := call(t, "GET", base+"/readyz", "", "")
	var body struct {
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("readyz %d: %s", r.status, r.body)
	}
	return readiness{status: r.status, database: body.Checks["database"], temporal: body.Checks["temporal"]}
}

// waitFor polls cond until it holds or within has passed.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

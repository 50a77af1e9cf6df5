package prodlike_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// BenchmarkNoisyNeighbourProduction is the full-size noisy-neighbour measurement of issue 20 in
// the production shape (docs/benchmarks.md, "Noisy neighbour, full size"): one `revops
// api` (HTTPS) and one `revops worker`, separate processes, on the prodlike stack's
// Temporal server over PostgreSQL. Opt-in (a measurement of minutes, not a check):
//
//	REVOPS_MEASURE_NOISY=1 scripts/prodlike/run -run '^$' -bench NoisyNeighbourProduction -benchtime 1x
//
// Organization A has 16 endpoints on an HTTPS receiver that holds every request 25 s
// before acknowledging it; organization B has one endpoint on a fast receiver. Two phases
// of one minute each, open load: B alone (one account change per second), then B with A
// creating 4 accounts per second. B's latency is from the API's answer to the receiver
// reading the webhook. REVOPS_WORKER_ACTIVITY_SLOTS, when set, is passed to the Revops
// processes (the stack gives them nothing of the test's environment otherwise).
func BenchmarkNoisyNeighbourProduction(b *testing.B) {
	noisyload.Require(b)
	prodlike.Require(b)
	set := noisyload.FromEnv()
	rc := newKeyReceiver(b) // B's
	hold := noisyload.NewHoldReceiver(set.Hold)
	b.Cleanup(hold.Release)
	env := []string{"REVOPS_WEBHOOK_CA_FILE=" + noisyCAFile(b, rc.Server, hold.Server), "REVOPS_WEBHOOK_ALLOW_PRIVATE=true"}
	if v := os.Getenv(noisyload.SlotsVar); v != "" {
		env = append(env, noisyload.SlotsVar+"="+v)
	}
	s := prodlike.Start(b, prodlike.Options{DynamicConfig: os.Getenv("REVOPS_PRODLIKE_DYNAMIC_CONFIG"), Env: env})
	b.Cleanup(hold.Release) // before the stack stops: no worker waits on a held request
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	api := s.StartAPI("api-1")
	s.StartWorker("worker-1")
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: s.ClientTLS(), MaxIdleConnsPerHost: 64}}
	client := func(org string) *apiClient {
		id := mustMatch(b, `organization: (\S+)`, mustRun(b, s, "orgs", "create", "--name", "Noisy "+org, "--email", org+"@noisy.test"))
		key := mustMatch(b, `secret sandbox key: (\S+)`, mustRun(b, s, "keys", "create", "--org", id, "--env", "sandbox", "--type", "secret"))
		return &apiClient{key: key, urls: []string{api.URL}, hc: hc}
	}
	orgA, orgB := client("a"), client("b")
	for i := range set.Endpoints {
		if _, err := orgA.change(ctx, "POST", "/v1/webhook_endpoints", map[string]any{"url": hold.URL + "/a/" + strconv.Itoa(i), "method": "POST", "enabled": true}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := orgB.change(ctx, "PUT", "/v1/webhook_endpoint", map[string]any{"url": rc.URL, "method": "POST", "enabled": true}); err != nil {
		b.Fatal(err)
	}
	accounts := make([]string, 4) // B's changes take turns: a change locks its account
	for i := range accounts {
		acc, err := orgB.change(ctx, "POST", "/v1/accounts", map[string]any{"name": fmt.Sprintf("Noisy B %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		accounts[i] = acc["id"].(string)
	}
	bChange := func(ctx context.Context, i int, key string) error {
		_, err := orgB.clone(0).change(ctx, "PATCH", "/v1/accounts/"+accounts[i%len(accounts)], map[string]any{"name": key})
		return err
	}
	for i := range 5 { // warm-up: connections, caches, B's code path
		key := "mk-noisy-warm-" + strconv.Itoa(i)
		ch := rc.expect(key)
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
			Key:    func(i int) string { return "mk-noisy-" + name + "-" + strconv.Itoa(i) },
			Expect: func(key string) <-chan time.Time { return rc.expect(key) },
			B:      bChange,
			Hold:   hold,
			Logf:   func(f string, args ...any) { fmt.Printf("  "+f+"\n", args...) },
		}
		if withA {
			p.A = func(ctx context.Context, i int) error {
				_, err := orgA.clone(0).change(ctx, "POST", "/v1/accounts", map[string]any{"name": "Noisy A " + strconv.Itoa(i)})
				return err
			}
		}
		return p
	}
	rows := []noisyload.Result{
		noisyload.Run(ctx, "prod", set, phase("alone", false)),
		noisyload.Run(ctx, "prod", set, phase("loaded", true)),
	}
	hold.Release() // A's held and queued deliveries end now, not 25 s apiece
	out := noisyload.Table(set, rows)
	for _, r := range rows {
		b.ReportMetric(msOf(r.B.P50), "b_"+r.Name+"_p50_ms")
		b.ReportMetric(msOf(r.B.P90), "b_"+r.Name+"_p90_ms")
	}
	fmt.Print(out)
	b.Log("\n" + out)
}

// noisyCAFile writes the receivers' certificates as the PEM file REVOPS_WEBHOOK_CA_FILE
// names (httptest's servers share one certificate; both are written all the same).
func noisyCAFile(t testing.TB, servers ...*httptest.Server) string {
	t.Helper()
	var raw []byte
	for _, s := range servers {
		raw = append(raw, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})...)
	}
	f := filepath.Join(t.TempDir(), "receivers.pem")
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

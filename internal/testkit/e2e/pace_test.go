package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// pacedBurst is the changes of the pacing test: each one event, delivered to a paced
// endpoint at 5/s, an unpaced endpoint of the same environment, and (a third of them)
// an endpoint of another organization.
const pacedBurst = 150

// TestPacedEndpointKeepsItsPace (CONTRACT §27) on the dev stack — the embedded Temporal
// server with `revops dev`'s dynamic config, set up by temporal-setup's code, and the API
// and a worker wired as `revops serve` wires them (app.Run), on PostgreSQL, with real
// HTTPS receivers: an endpoint at {"limit":5,"period":"1s"} gets a burst of changes'
// deliveries at most at its pace plus the engine's burst in every second (counted at
// the receiver), each in one attempt (no attempt spent waiting); the same environment's
// unpaced endpoint and another organization's endpoint get theirs meanwhile; a rate
// change is read back from Temporal as the key's weight override.
func TestPacedEndpointKeepsItsPace(t *testing.T) {
	db := webhooktest.New(t) // organization a
	ctx := context.Background()
	orgB, _, err := orgs.Create(ctx, db.Store, "Other", "ops@other.test")
	if err != nil {
		t.Fatal(err)
	}
	keyA := secretKey(t, db.Store, db.Env.OrganizationID, db.Env.Name)
	keyB := secretKey(t, db.Store, orgB.ID, models.EnvSandbox)
	temporalAddr := devTemporal(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := config.Load(flag.NewFlagSet("serve", flag.ContinueOnError), "serve", []string{
		"--http-addr", "127.0.0.1:0", "--metrics-addr", "", "--rate-limit", "0", "--env-rate-limit", "0", "--temporal-address", temporalAddr,
		"--webhook-ca-file", webhooktest.CAFile(t), "--webhook-allow-private",
	})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := client.Dial(app.TemporalOptions(cfg, quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if _, err := temporalsetup.Run(ctx, tc, app.TemporalSetup(cfg, quiet, devstack.SearchAttributeSettle)); err != nil {
		t.Fatalf("temporal setup: %v", err)
	}
	base := serve(t, cfg, quiet, db, tc)

	paced, unpaced, other := webhooktest.NewReceiver(t), webhooktest.NewReceiver(t), webhooktest.NewReceiver(t)
	pacedID := createEndpoint(t, base, keyA.Plain, map[string]any{"url": paced.URL + "/paced", "rate_limit": map[string]any{"limit": 5, "period": "1s"}})
	createEndpoint(t, base, keyA.Plain, map[string]any{"url": unpaced.URL + "/unpaced"})
	createEndpoint(t, base, keyB.Plain, map[string]any{"url": other.URL + "/other"})
	queue := temporalsetup.PacedQueue{Client: tc, Namespace: cfg.TemporalNamespace, Queue: wire.PacedTaskQueue}
	waitWeight(t, queue, pacedID, 5)

	a, b := apiClient(t, base, keyA.Plain), apiClient(t, base, keyB.Plain)
	for i := range pacedBurst {
		if _, err := a.CreateAccount(ctx, &revops.AccountCreate{Name: fmt.Sprintf("A %d", i)}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := b.CreateAccount(ctx, &revops.AccountCreate{Name: fmt.Sprintf("B %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The others are not held behind the paced endpoint's backlog.
	waitFor(t, 5*time.Minute, "the unpaced endpoints' deliveries", func() bool {
		return len(unpaced.Received()) >= pacedBurst && len(other.Received()) >= pacedBurst/3
	})
	atOthersDone := len(paced.Received())
	if atOthersDone >= pacedBurst {
		t.Fatalf("the paced endpoint had all %d deliveries when the unpaced ones had theirs: it was not paced", atOthersDone)
	}
	waitFor(t, 5*time.Minute, "the paced endpoint's deliveries", func() bool { return len(paced.Received()) >= pacedBurst })

	most, spanned := busiestSecond(paced.Received())
	t.Logf("paced endpoint at 5/1s: %d deliveries over %v, at most %d in any 1 s window (limit 5, burst 6); it had %d when the unpaced endpoint (%d) and the other organization's (%d) had all theirs",
		len(paced.Received()), spanned.Round(time.Millisecond), most, atOthersDone, len(unpaced.Received()), len(other.Received()))
	// The engine's burst (docs/webhook-endpoints.md): a quiet key may go rate × 1 s + 1
	// times at once, 6 at 5/s; then once every 200 ms.
	if most > 5+6 {
		t.Errorf("the receiver saw %d requests within one second: more than the limit 5 plus the burst 6", most)
	}
	if got := len(paced.Received()); got != pacedBurst {
		t.Errorf("the paced receiver got %d requests for %d deliveries: an attempt was repeated", got, pacedBurst)
	}
	checkOneAttemptEach(t, db, pacedID)

	// A rate change reaches the engine: the key's override read back is the new rate.
	patchEndpoint(t, base, keyA.Plain, pacedID, map[string]any{"rate_limit": map[string]any{"limit": 30, "period": "1m"}})
	waitWeight(t, queue, pacedID, 0.5)
	patchEndpoint(t, base, keyA.Plain, pacedID, map[string]any{"rate_limit": nil})
	waitFor(t, 5*time.Minute, "the override removed once unpaced", func() bool {
		_, overrides, err := queue.Config(ctx)
		_, has := overrides[pacedID]
		return err == nil && !has
	})
}

// serve runs the API and a worker as `revops serve` does until the test ends, and
// returns the API's base URL.
func serve(t *testing.T, cfg config.Config, log *slog.Logger, db *webhooktest.DB, tc client.Client) string {
	t.Helper()
	runCtx, stop := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- app.Run(runCtx, cfg, log, db.Store, tc, app.Parts{API: true, Worker: true, Ready: ready})
	}()
	t.Cleanup(func() { stop(); <-done })
	select {
	case addr := <-ready:
		return "http://" + addr
	case err := <-done:
		t.Fatalf("serve did not start: %v", err)
	}
	return ""
}

func apiClient(t *testing.T, base, key string) *revops.Client {
	t.Helper()
	c, err := revops.NewClient(revops.WithBaseURL(base), revops.WithAPIKey(key), revops.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createEndpoint and patchEndpoint speak JSON to the API directly: the rate_limit
// members as a receiver's integrator writes them.
func createEndpoint(t *testing.T, base, key string, body map[string]any) string {
	t.Helper()
	return jsonCall(t, "POST", base+"/v1/webhook_endpoints", key, body, http.StatusCreated)["id"].(string)
}

func patchEndpoint(t *testing.T, base, key, id string, body map[string]any) {
	t.Helper()
	jsonCall(t, "PATCH", base+"/v1/webhook_endpoints/"+id, key, body, http.StatusOK)
}

func jsonCall(t *testing.T, method, url, key string, body map[string]any, want int) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	r := call(t, method, url, key, string(raw))
	if r.status != want {
		t.Fatalf("%s %s: %d %s", method, url, r.status, r.body)
	}
	return r.json(t)
}

// waitWeight waits until the paced queue's override of key reads back as rate.
func waitWeight(t *testing.T, q temporalsetup.PacedQueue, key string, rate float64) {
	t.Helper()
	var last map[string]float32
	waitFor(t, 5*time.Minute, fmt.Sprintf("the override of %s at %v", key, rate), func() bool {
		def, overrides, err := q.Config(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if def == nil || *def != wire.PacedKeyRate {
			t.Fatalf("the paced queue's per-key rate is %v, want %v (temporal setup)", def, wire.PacedKeyRate)
		}
		last = overrides
		return overrides[key] == float32(rate)
	})
	t.Logf("override read back from Temporal: %s → %v (%v)", key, last[key], last)
}

// busiestSecond is the most requests within any window of one second (from a request's
// arrival), and the time from the first to the last.
func busiestSecond(rs []webhooktest.Received) (int, time.Duration) {
	at := make([]time.Time, len(rs))
	for i, r := range rs {
		at[i] = r.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	most := 0
	for i := range at {
		n := 0
		for j := i; j < len(at) && at[j].Sub(at[i]) < time.Second; j++ {
			n++
		}
		most = max(most, n)
	}
	if len(at) == 0 {
		return 0, 0
	}
	return most, at[len(at)-1].Sub(at[0])
}

// checkOneAttemptEach: every delivery to the endpoint was delivered by its first
// attempt: waiting for its turn spent none.
func checkOneAttemptEach(t *testing.T, db *webhooktest.DB, endpointID string) {
	t.Helper()
	var rows []struct {
		Number int
		N      int
	}
	if err := db.SQL().Raw("SELECT number, COUNT(*) AS n FROM delivery_attempts WHERE endpoint_id = ? GROUP BY number", endpointID).
		Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Number != 1 || rows[0].N != pacedBurst {
		t.Fatalf("attempts to the paced endpoint by number: %+v, want %d of number 1", rows, pacedBurst)
	}
}

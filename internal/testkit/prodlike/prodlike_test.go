package prodlike_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// The tools module builds the Temporal binaries at the release the main module links: a
// bump of one without the other fails here, before any stack is built.
func TestTemporalToolsPinTheServerOfGoMod(t *testing.T) {
	root, err := prodlike.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	main, tools, err := prodlike.ServerVersions(root)
	if err != nil {
		t.Fatal(err)
	}
	if main != tools {
		t.Fatalf("go.mod pins go.temporal.io/server %s, scripts/prodlike/temporal/go.mod builds %s", main, tools)
	}
}

// The tools module builds the Temporal binaries from the very module versions the main
// module compiles for its test binaries, so that building them reuses the build cache
// (a link and a handful of command-line packages rather than a second compile of the
// whole server: about 1,000 packages). scripts/prodlike/temporal/align restores it.
func TestTemporalToolsShareTheMainModulesVersions(t *testing.T) {
	root, err := prodlike.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "prodlike", "temporal", "align"), "--check")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s\nrun scripts/prodlike/temporal/align", err, out)
	}
}

const (
	clients          = 8
	changesPerClient = 40 // each client: its account, then deals created and edited
	dealEvery        = 5  // a new deal every 5th change, edits of it in between
)

// The production shape end to end (CONTRACT §16, issue 15): deal changes from 8 clients
// through two API replicas while one worker is SIGKILLed (and replaced), one API replica
// is SIGKILLed (its clients retry on the other with the same Idempotency-Key), the
// Temporal server is restarted and PostgreSQL crashes and restarts. Every acknowledged
// change is committed exactly once and its event delivered to a real HTTPS receiver;
// nothing stays pending or retrying; duplicates (allowed: at-least-once) are counted.
func TestProductionShapeSurvivesKillsAndRestarts(t *testing.T) {
	prodlike.Require(t)
	receiver := webhooktest.NewReceiver(t)
	s, c, apis, workers := startShape(t, receiver)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := c.change(ctx, "PUT", "/v1/webhook_endpoint", map[string]any{"url": receiver.URL + "/hooks", "method": "POST", "enabled": true}); err != nil {
		t.Fatal(err)
	}

	total := clients * changesPerClient
	var (
		acked   atomic.Int64
		mu      sync.Mutex
		perObj  = map[string]int{} // object id → acknowledged changes
		retries atomic.Int64
		lat     []time.Duration
	)
	record := func(obj string) {
		mu.Lock()
		perObj[obj]++
		mu.Unlock()
		acked.Add(1)
	}

	// The faults, each when a share of the changes is acknowledged, so they fall while
	// changes flow and deliveries run.
	sendBegan := time.Now()
	faultsDone := make(chan error, 1)
	go func() {
		faultsDone <- injectFaults(ctx, t, s, &acked, total, sendBegan, workers, apis)
	}()

	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c.clone(i % 2)
			acc, err := cl.change(ctx, "POST", "/v1/accounts", map[string]any{"name": fmt.Sprintf("Client %d Co", i)})
			if err != nil {
				errs <- err
				return
			}
			record(acc["id"].(string))
			var deal string
			for n := 1; n < changesPerClient; n++ {
				if err := window(ctx, &acked, receiver); err != nil {
					errs <- err
					return
				}
				var obj map[string]any
				if n%dealEvery == 1 {
					obj, err = cl.change(ctx, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": acc["id"]}})
					if err == nil {
						deal = obj["id"].(string)
					}
				} else {
					obj, err = cl.change(ctx, "PATCH", "/v1/deals/"+deal, map[string]any{"opportunity_id": fmt.Sprintf("c%d-%d", i, n)})
				}
				if err != nil {
					errs <- err
					return
				}
				record(obj["id"].(string))
			}
			retries.Add(cl.retries)
			mu.Lock()
			lat = append(lat, cl.lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	sendTook := time.Since(sendBegan)
	if err := <-faultsDone; err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}
	slices.Sort(lat)
	t.Logf("%d changes acknowledged in %s (%.0f/s) through the faults; %d requests sent again; time to acknowledgement p50 %s, p99 %s, max %s",
		acked.Load(), sendTook.Round(100*time.Millisecond), float64(acked.Load())/sendTook.Seconds(), retries.Load(),
		lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))

	// Nothing stuck: within a bounded wait every event is delivered and the receiver saw
	// it. The wait covers an attempt cut by the SIGKILL (its 30 s start-to-close timeout,
	// then a retry 2 s later) and the sweeper's start of events Temporal did not take.
	waitBegan := time.Now()
	var events []event
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var err error
		events, err = c.listEvents(ctx)
		if err == nil && allDelivered(events, receiver) {
			break
		}
		if time.Now().After(deadline) {
			stuck := 0
			for _, e := range events {
				if e.Status != "delivered" || seen(receiver)[e.ID] == 0 {
					if stuck < 20 {
						t.Errorf("stuck: event %s (%s of %s) status %s, received %d times", e.ID, e.Type, e.ObjectID, e.Status, seen(receiver)[e.ID])
					}
					stuck++
				}
			}
			t.Fatalf("%d of %d events not delivered 3 min after the last change (list error: %v)", stuck, len(events), err)
		}
		time.Sleep(time.Second)
	}
	t.Logf("all %d events delivered %s after the last change (%.0f deliveries/s from the first change)",
		len(events), time.Since(waitBegan).Round(100*time.Millisecond), float64(len(events))/time.Since(sendBegan).Seconds())

	// Exactly the acknowledged changes were committed: one event per acknowledged change
	// of each object, none lost and none doubled by a retried request.
	got := map[string]int{}
	for _, e := range events {
		got[e.ObjectID]++
	}
	mu.Lock()
	for obj, n := range perObj {
		if got[obj] != n {
			t.Errorf("object %s: %d changes acknowledged, %d events committed", obj, n, got[obj])
		}
	}
	mu.Unlock()
	if len(events) != int(acked.Load()) {
		t.Errorf("%d changes acknowledged, %d events committed", acked.Load(), len(events))
	}

	// At-least-once: duplicates are allowed, and reported.
	counts := seen(receiver)
	dups, dupEvents := 0, 0
	for _, e := range events {
		if n := counts[e.ID]; n > 1 {
			dups += n - 1
			dupEvents++
		}
	}
	t.Logf("duplicates: %d extra deliveries of %d events (of %d events, %d requests received)",
		dups, dupEvents, len(events), len(receiver.Received()))
}

// inFlight bounds the changes acknowledged but not yet delivered: the clients keep pace
// with the deliveries, so every fault falls while both changes and deliveries flow.
const inFlight = 40

// window waits until fewer than inFlight acknowledged changes wait for delivery. Bounded:
// deliveries that stall for 3 minutes fail the test.
func window(ctx context.Context, acked *atomic.Int64, rc *webhooktest.Receiver) error {
	deadline := time.Now().Add(3 * time.Minute)
	for acked.Load()-int64(len(seen(rc))) >= inFlight {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("deliveries stalled: %d changes acknowledged, %d events received after 3 min", acked.Load(), len(seen(rc)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// injectFaults runs the four faults in order, each once the given share of the changes
// is acknowledged.
func injectFaults(ctx context.Context, t *testing.T, s *prodlike.Stack, acked *atomic.Int64, total int, began time.Time, workers []*prodlike.Proc, apis []*prodlike.API) error {
	at := func(share float64) error {
		for acked.Load() < int64(share*float64(total)) {
			if ctx.Err() != nil {
				return fmt.Errorf("faults: only %d of %d changes acknowledged: %w", acked.Load(), total, ctx.Err())
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	}
	if err := at(0.15); err != nil {
		return err
	}
	workers[0].Kill()
	t.Logf("%s, fault at %d changes: SIGKILLed %s (pid %d); starting a replacement", since(began), acked.Load(), workers[0].Name, workers[0].Pid())
	s.StartProcess("worker-3", "worker") // not waited for: the next fault comes on schedule

	if err := at(0.35); err != nil {
		return err
	}
	apis[0].Kill()
	t.Logf("%s, fault at %d changes: SIGKILLed %s (pid %d); its clients go on through the other replica", since(began), acked.Load(), apis[0].Name, apis[0].Pid())

	if err := at(0.55); err != nil {
		return err
	}
	took, err := s.RestartTemporal(ctx)
	if err != nil {
		return fmt.Errorf("restart Temporal: %w", err)
	}
	t.Logf("%s, fault at %d changes: Temporal server restarted, serving again after %s", since(began), acked.Load(), took.Round(100*time.Millisecond))

	if err := at(0.75); err != nil {
		return err
	}
	took, err = s.RestartPostgres()
	if err != nil {
		return fmt.Errorf("restart PostgreSQL: %w", err)
	}
	t.Logf("%s, fault at %d changes: PostgreSQL crashed (immediate stop) and restarted in %s", since(began), acked.Load(), took.Round(100*time.Millisecond))
	return nil
}

// startShape starts the production shape of the acceptance tests: the stack, whose
// workers trust receiver, with env added to its settings; a secret sandbox key; two API
// replicas and two workers; and a client of both replicas with that key.
func startShape(t *testing.T, receiver *webhooktest.Receiver, env ...string) (*prodlike.Stack, *apiClient, []*prodlike.API, []*prodlike.Proc) {
	t.Helper()
	s := prodlike.Start(t, prodlike.Options{
		RetryInterval: 2 * time.Second,
		Env: append([]string{
			"REVOPS_WEBHOOK_CA_FILE=" + caFileOf(t, receiver.Certificate()),
			"REVOPS_WEBHOOK_ALLOW_PRIVATE=true", // the receiver is on loopback
			"REVOPS_RATE_LIMIT=1000",            // 8 clients on one key: the limit is not under test
			"REVOPS_ENV_RATE_LIMIT=0",           // nor the environment's (CONTRACT §17)
		}, env...),
	})
	key := secretKey(t, s)
	began := time.Now()
	apis := []*prodlike.API{s.StartAPI("api-1"), s.StartAPI("api-2")}
	workers := []*prodlike.Proc{s.StartWorker("worker-1"), s.StartWorker("worker-2")}
	t.Logf("2 api + 2 worker processes ready in %s", since(began))
	c := &apiClient{key: key, urls: []string{apis[0].URL, apis[1].URL},
		hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}}
	return s, c, apis, workers
}

// apiClient sends changes to whichever API replica answers.
type apiClient struct {
	key     string
	urls    []string
	hc      *http.Client
	next    int             // the replica tried first
	retries int64           // requests sent again (another replica, or the same after a 5xx)
	lat     []time.Duration // first send to acknowledgement, per change
}

func (c *apiClient) clone(first int) *apiClient {
	return &apiClient{key: c.key, urls: c.urls, hc: c.hc, next: first}
}

// change sends one change with its own Idempotency-Key until a replica acknowledges it
// (2xx), moving to the other replica after a connection error, a 5xx, a 429 or an
// idempotency_key_in_use (the first attempt may still hold the key on a replica that
// died: its claim lapses after 60 s). Any other answer is an error. Bounded: 2 minutes.
func (c *apiClient) change(ctx context.Context, method, path string, body any) (map[string]any, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	idem := uuid.NewString()
	first := time.Now()
	deadline := first.Add(2 * time.Minute)
	wait := 100 * time.Millisecond
	var last string
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			c.retries++
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil, fmt.Errorf("%s %s not acknowledged after 2 min; last answer: %s", method, path, last)
			}
			time.Sleep(wait)
			wait = min(2*wait, time.Second)
		}
		url := c.urls[c.next%len(c.urls)]
		req, err := http.NewRequestWithContext(ctx, method, url+path, bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", idem)
		resp, err := c.hc.Do(req)
		if err != nil {
			last = err.Error()
			c.next++
			continue
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, rb)
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			c.lat = append(c.lat, time.Since(first))
			var obj map[string]any
			if err := json.Unmarshal(rb, &obj); err != nil {
				return nil, fmt.Errorf("%s %s: %w: %s", method, path, err, rb)
			}
			return obj, nil
		case resp.StatusCode >= 500, resp.StatusCode == http.StatusTooManyRequests,
			resp.StatusCode == http.StatusConflict && bytes.Contains(rb, []byte("idempotency_key_in_use")):
			c.next++
			continue
		default:
			return nil, fmt.Errorf("%s %s: %s", method, path, last)
		}
	}
}

type event struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	ObjectID string `json:"object_id"`
}

// listEvents pages through every event of the environment.
func (c *apiClient) listEvents(ctx context.Context) ([]event, error) {
	var all []event
	after := ""
	for {
		path := "/v1/events?limit=100"
		if after != "" {
			path += "&starting_after=" + after
		}
		var page struct {
			Data    []event `json:"data"`
			HasMore bool    `json:"has_more"`
		}
		if err := c.get(ctx, path, &page); err != nil {
			return all, err
		}
		all = append(all, page.Data...)
		if !page.HasMore || len(page.Data) == 0 {
			return all, nil
		}
		after = page.Data[len(page.Data)-1].ID
	}
}

func (c *apiClient) get(ctx context.Context, path string, into any) error {
	var errs []error
	for i := range c.urls {
		req, err := http.NewRequestWithContext(ctx, "GET", c.urls[(c.next+i)%len(c.urls)]+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		resp, err := c.hc.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			errs = append(errs, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b))
			continue
		}
		return json.Unmarshal(b, into)
	}
	return errors.Join(errs...)
}

// seen counts the deliveries the receiver got, by event id (webhook-id header).
func seen(rc *webhooktest.Receiver) map[string]int {
	n := map[string]int{}
	for _, r := range rc.Received() {
		n[r.Header.Get("webhook-id")]++
	}
	return n
}

func allDelivered(events []event, rc *webhooktest.Receiver) bool {
	if len(events) == 0 {
		return false
	}
	got := seen(rc)
	for _, e := range events {
		if e.Status != "delivered" || got[e.ID] == 0 {
			return false
		}
	}
	return true
}

func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

func mustRun(t testing.TB, s *prodlike.Stack, args ...string) string {
	t.Helper()
	out, err := s.Revops(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustMatch(t testing.TB, pattern, s string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %q in:\n%s", pattern, s)
	}
	return m[1]
}

// caFileOf writes cert as the PEM file REVOPS_WEBHOOK_CA_FILE names, so that the stack's
// worker trusts the test's HTTPS receiver.
func caFileOf(t testing.TB, cert *x509.Certificate) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "receiver.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// secretKey creates an organization through the CLI and returns its secret sandbox key.
func secretKey(t testing.TB, s *prodlike.Stack) string { return orgKey(t, s, "Acme") }

// orgKey creates the organization name through the CLI and returns its secret sandbox key.
func orgKey(t testing.TB, s *prodlike.Stack, name string) string {
	t.Helper()
	org := mustMatch(t, `organization: (\S+)`, mustRun(t, s, "orgs", "create", "--name", name, "--email", "ops@"+strings.ToLower(name)+".test"))
	return mustMatch(t, `secret sandbox key: (\S+)`, mustRun(t, s, "keys", "create", "--org", org, "--env", "sandbox", "--type", "secret"))
}

// requireMeasure skips a measurement unless REVOPS_PRODLIKE_MEASURE asks for it.
func requireMeasure(t testing.TB) {
	t.Helper()
	if os.Getenv("REVOPS_PRODLIKE_MEASURE") == "" {
		t.Skip("a measurement: REVOPS_PRODLIKE_MEASURE=1 runs it (scripts/prodlike/run -run '^$' -bench . -benchtime 1x)")
	}
}

package webhooktest

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	revops "github.com/revops/revops/clients/go"
)

// Hold makes the receiver hold every request (recorded on arrival) until release is
// called or the sender gives up; release runs at cleanup too, before the server closes.
func (rc *Receiver) Hold(t testing.TB) (release func()) {
	released := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	t.Cleanup(release)
	rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-released:
			_, _ = fmt.Fprint(w, AckSentence)
		case <-r.Context().Done():
		}
	})
	return release
}

// NoisyNeighbour is the acceptance scenario of CONTRACT §17's fair dispatch, for a stack
// whose worker runs slots delivery attempts at a time (REVOPS_WORKER_ACTIVITY_SLOTS) and
// a long retry interval: organization a has 16 endpoints whose receiver holds every
// request, and one change fills the worker's slots with its deliveries while the rest
// wait; organization b (one fast endpoint) then makes changes. Every delivery of b must
// arrive while some of a's deliveries still wait for their first attempt (a's receiver
// is released only after). Slots free only when an attempt ends (its 30 s timeout), so
// b's deliveries come when a's first attempts time out — after all of a's backlog with
// first-in-first-out matching, which fails here. It returns b's latencies, from each
// change's acknowledgement to its delivery's arrival, in order of arrival.
func NoisyNeighbour(t testing.TB, slots int, a, b *revops.Client) []time.Duration {
	t.Helper()
	const endpointsA, changesB = 16, 3
	ctx := context.Background()
	endpoint := func(c *revops.Client, url string) {
		t.Helper()
		if _, err := c.CreateWebhookEndpoint(ctx, &revops.EndpointCreate{URL: url, Method: revops.Ptr(revops.WebhookMethodPOST)}); err != nil {
			t.Fatalf("create the endpoint %s: %v", url, err)
		}
	}
	account := func(c *revops.Client, name string) string {
		t.Helper()
		acct, err := c.CreateAccount(ctx, &revops.AccountCreate{Name: name})
		if err != nil {
			t.Fatalf("create the account %s: %v", name, err)
		}
		return acct.ID
	}
	held, fast := NewReceiver(t), NewReceiver(t)
	release := held.Hold(t)
	for i := range endpointsA {
		endpoint(a, fmt.Sprintf("%s/hooks/%d", held.URL, i))
	}
	endpoint(b, fast.URL+"/hooks")

	account(a, "Noisy")
	waitUntil(t, "a's deliveries filling the worker's slots", func() bool { return len(held.Received()) >= slots })
	if n := len(held.Received()); n != slots {
		t.Fatalf("a's receiver holds %d attempts, want the worker's %d slots", n, slots)
	}

	acked := map[string]time.Time{} // b's account id → its change's acknowledgement
	for i := range changesB {
		acked[account(b, fmt.Sprintf("Quiet %d", i))] = time.Now()
	}
	waitUntil(t, "b's deliveries", func() bool {
		if n := endpointsReached(held); n == endpointsA {
			t.Fatalf("all %d of a's deliveries were attempted before b's %d arrived (%d of them): dispatch is not fair across environments",
				n, changesB, len(fast.Received()))
		}
		return len(fast.Received()) >= changesB
	})
	waiting := endpointsA - endpointsReached(held)
	release()

	var lat []time.Duration
	for _, r := range fast.Received() {
		var body struct{ Account struct{ ID string } }
		if err := json.Unmarshal(r.Body, &body); err != nil || acked[body.Account.ID].IsZero() {
			t.Fatalf("b's receiver got %s (err %v)", r.Body, err)
		}
		lat = append(lat, r.At.Sub(acked[body.Account.ID]))
	}
	t.Logf("b's %d deliveries arrived after %v, while %d of a's %d deliveries still waited for a slot (a's receiver held %d attempts)",
		len(lat), lat, waiting, endpointsA, len(held.Received()))
	return lat
}

// endpointsReached counts the distinct endpoints (paths) the receiver got a request for.
func endpointsReached(rc *Receiver) int {
	var paths []string
	for _, r := range rc.Received() {
		if !slices.Contains(paths, r.Path) {
			paths = append(paths, r.Path)
		}
	}
	return len(paths)
}

// waitUntil polls cond every 100 ms for up to 5 minutes: a bound on a hung stack, not an
// assertion on time.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 5 minutes", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CAFile writes, under t's temporary directory, the PEM of the certificate every
// Receiver serves (net/http/httptest's own), for REVOPS_WEBHOOK_CA_FILE.
func CAFile(t testing.TB) string {
	t.Helper()
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	f := filepath.Join(t.TempDir(), "receivers.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/revops/revops/internal/dashboard"
	"github.com/revops/revops/internal/testkit/testdb"
)

// replicas are two dashboards, each with its own connection pool, over one PostgreSQL
// database: what two API replicas behind a load balancer are.
func replicas(t *testing.T, args ...string) (a, b *site) {
	t.Helper()
	dbURL := testdb.URL(t)
	return newSiteOn(t, testdb.Open(t, dbURL), args...), newSiteOn(t, testdb.Open(t, dbURL), args...)
}

// loginAs posts a login from a fresh browser with extra headers (X-Forwarded-For).
func loginAs(s *site, email, password string, hdr ...string) page {
	return s.client().login(email, password, hdr...)
}

// perClientLimit is the dashboard's per-client limit of login attempts a minute.
const perClientLimit = 20

// busyMessage is the login page's words when no password hash slot came free in time.
const busyMessage = "Too many people are signing in right now"

// One client's failures for an email, made on replica A, refuse its correct password on
// replica B (without trusted proxies, every test client is the same peer).
func TestThrottleSharedAcrossReplicas(t *testing.T) {
	a, b := replicas(t)
	u := a.newUser("Acme", "owner@acme.test")
	for i := range 5 {
		if p := loginAs(a, u.email, "wrong"); p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d on replica A: %d", i+1, p.status)
		}
	}
	p := loginAs(b, u.email, u.password)
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many failed attempts") || p.header.Get("Retry-After") == "" {
		t.Fatalf("replica B after five failures on A: %d, want 429 with Retry-After: %.300s", p.status, p.body)
	}
}

// One client guessing across many emails is stopped by its per-client count, whichever
// replica it reaches; the forged X-Forwarded-For it sends does not give it a new count.
func TestThrottlePerClientIgnoresUntrustedForwardedFor(t *testing.T) {
	defer dashboard.HoldThrottleClock()() // a window's worth of logins, however slow the machine
	a, b := replicas(t)
	u := a.newUser("Acme", "owner@acme.test")
	for i := range perClientLimit {
		s := []*site{a, b}[i%2]
		if p := loginAs(s, fmt.Sprintf("guess%d@acme.test", i), "wrong", "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i)); p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, p.status)
		}
	}
	if p := loginAs(b, u.email, u.password, "X-Forwarded-For", "198.51.100.200"); p.status != http.StatusTooManyRequests {
		t.Fatalf("attempt %d from the same peer with a new forged address: %d, want 429", perClientLimit+1, p.status)
	}
}

// Behind a trusted proxy the client is the right-most untrusted X-Forwarded-For address:
// clients behind it are counted apart, and a forged left part changes nothing.
func TestThrottleBehindTrustedProxy(t *testing.T) {
	a, b := replicas(t, "--trusted-proxies", "127.0.0.1/32,::1/128") // the test servers' peer is the "proxy"
	u := a.newUser("Acme", "owner@acme.test")
	for i := range perClientLimit {
		s := []*site{a, b}[i%2]
		if p := loginAs(s, fmt.Sprintf("guess%d@acme.test", i), "wrong", "X-Forwarded-For", "198.51.100.7"); p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, p.status)
		}
	}
	for _, tc := range []struct {
		xff    string
		status int
	}{
		{"198.51.100.7", http.StatusTooManyRequests},
		{"203.0.113.1, 198.51.100.7", http.StatusTooManyRequests}, // forged left part
		{"198.51.100.7, 127.0.0.1", http.StatusTooManyRequests},   // a second trusted hop
		{"198.51.100.8", http.StatusSeeOther},                     // another client behind the proxy
	} {
		if p := loginAs(b, u.email, u.password, "X-Forwarded-For", tc.xff); p.status != tc.status {
			t.Errorf("X-Forwarded-For %q: %d, want %d", tc.xff, p.status, tc.status)
		}
	}
}

// Thirty simultaneous guesses spread over two replicas: exactly as many get their password
// checked as the limit allows, the rest are refused unchecked. Each limit is raced on its
// own: one email from one client, and thirty emails from one client. A login the throttle
// let through but the bounded hashing turned away counts as checked.
func TestThrottleHoldsUnderConcurrency(t *testing.T) {
	a, b := replicas(t, "--trusted-proxies", "127.0.0.1/32,::1/128")
	u := a.newUser("Acme", "owner@acme.test")
	const n = 30
	for _, tc := range []struct {
		name    string
		email   func(i int) string
		client  func(i int) string
		checked int
	}{
		{"one email", func(int) string { return u.email }, func(int) string { return "198.51.100.9" }, 5},
		{"one client", func(i int) string { return fmt.Sprintf("guess%d@acme.test", i) }, func(int) string { return "203.0.113.5" }, perClientLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type attempt struct {
				c   *client
				tok string
			}
			attempts := make([]attempt, n)
			for i := range attempts {
				c := []*site{a, b}[i%2].client()
				attempts[i] = attempt{c: c, tok: c.csrf("/dashboard/login")}
			}
			statuses := make([]int, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, at := range attempts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					form := url.Values{"csrf_token": {at.tok}, "email": {tc.email(i)}, "password": {"wrong"}}
					req, err := http.NewRequest(http.MethodPost, at.c.base+"/dashboard/login", strings.NewReader(form.Encode()))
					if err != nil {
						errs[i] = err
						return
					}
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Header.Set("X-Forwarded-For", tc.client(i))
					res, err := at.c.http.Do(req)
					if err != nil {
						errs[i] = err
						return
					}
					body, err := io.ReadAll(res.Body)
					_ = res.Body.Close()
					statuses[i] = res.StatusCode
					if err == nil && res.StatusCode == http.StatusTooManyRequests && strings.Contains(string(body), busyMessage) {
						// Past the throttle, but every hash slot stayed busy (a loaded test
						// machine): it would have been checked.
						statuses[i] = http.StatusUnauthorized
					}
				}()
			}
			wg.Wait()
			counts := map[int]int{}
			for i, st := range statuses {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				counts[st]++
			}
			if counts[http.StatusUnauthorized] != tc.checked || counts[http.StatusTooManyRequests] != n-tc.checked {
				t.Fatalf("statuses %v: want %d checked (401) and %d refused (429)", counts, tc.checked, n-tc.checked)
			}
		})
	}
}

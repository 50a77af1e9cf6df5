package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/testkit/testdb"
)

// CONTRACT §17: failures for an email slow only the clients that made them; a correct
// password is refused only when its own client is over its limits.
func TestThrottle(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	th := newThrottle(testdb.New(t))
	th.now = func() time.Time { return now }
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	steps := []struct {
		name     string
		advance  time.Duration
		email    string
		ip       netip.Addr
		tries    int  // attempts made at this step; the last one is judged
		succeed  bool // then the last attempt logs in
		wantWait bool
	}{
		{"five attempts pass", 0, "x@example.com", a, 5, false, false},
		{"the sixth waits", 0, "x@example.com", a, 1, false, true},
		{"another address is not slowed: the owner signs in", 0, "x@example.com", b, 1, true, false},
		{"another email from the guessing client is free", 0, "y@example.com", a, 1, false, false},
		{"still waiting just before the window ends", 59 * time.Second, "x@example.com", a, 1, false, true},
		{"free when it has", time.Second, "x@example.com", a, 1, false, false},
		{"a success clears the client's failures for the email", 0, "x@example.com", a, 3, true, false},
		{"so five more pass", 0, "x@example.com", a, 5, false, false},
		{"and the sixth waits", 0, "x@example.com", a, 1, false, true},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		var r refusal
		for range s.tries {
			var err error
			if r, err = th.attempt(ctx, s.email, s.ip); err != nil {
				t.Fatal(err)
			}
		}
		if s.succeed {
			if err := th.succeeded(ctx, s.email, s.ip); err != nil {
				t.Fatal(err)
			}
		}
		if got := r.wait > 0; got != s.wantWait {
			t.Fatalf("%s: wait %v, want waiting=%v", s.name, r.wait, s.wantWait)
		}
	}
}

// A client's budget counts every attempt, successful or not, across emails; the /64 of
// an IPv6 client is one client.
func TestThrottlePerClient(t *testing.T) {
	ctx := context.Background()
	th := newThrottle(testdb.New(t))
	c := netip.MustParseAddr("2001:db8:1:2::7")
	sameSubnet := netip.MustParseAddr("2001:db8:1:2:ffff::1")
	for i := range perClient.max {
		email := string(rune('a'+i)) + "@example.com"
		r, err := th.attempt(ctx, email, c)
		if err != nil || r.wait > 0 {
			t.Fatalf("attempt %d: wait %v, err %v", i+1, r.wait, err)
		}
		if i%2 == 0 { // successful logins count too
			if err := th.succeeded(ctx, email, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := th.attempt(ctx, "fresh@example.com", sameSubnet)
	if err != nil || r.wait <= 0 || !r.overall {
		t.Fatalf("attempt %d from the same /64: %+v, err %v; want a wait on the client's budget", perClient.max+1, r, err)
	}
	if r, _ := th.attempt(ctx, "fresh2@example.com", netip.MustParseAddr("2001:db8:1:3::7")); r.wait > 0 {
		t.Errorf("another /64 waits %v", r.wait)
	}
}

// The hashes a process computes at once are bounded: a login finding every slot taken
// waits briefly, then is refused.
func TestHashGate(t *testing.T) {
	g := newHashGate(1, 50*time.Millisecond)
	ctx := context.Background()
	if !g.enter(ctx) {
		t.Fatal("first slot refused")
	}
	began := time.Now()
	if g.enter(ctx) {
		t.Fatal("a second hash ran beside the first")
	}
	if waited := time.Since(began); waited < 40*time.Millisecond {
		t.Errorf("refused after %v, want a brief wait first", waited)
	}
	// A slot freed while a login waits is taken: a long wait, so that a stalled test
	// process (race run, loaded machine) cannot let the timer win.
	patient := newHashGate(1, time.Minute)
	patient.enter(ctx)
	go func() { time.Sleep(10 * time.Millisecond); patient.leave() }()
	if !patient.enter(ctx) {
		t.Fatal("a slot freed during the wait was not taken")
	}
}

// A login finding every hash slot taken waits briefly, then gets 429 with Retry-After.
func TestLoginRefusedWhenHashesBusy(t *testing.T) {
	d := New(Deps{Store: testdb.New(t), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	d.h.hashes = newHashGate(1, 20*time.Millisecond)
	if !d.h.hashes.enter(context.Background()) { // another login's hash is running
		t.Fatal("no slot")
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	d.Routes(r)
	form := url.Values{"csrf_token": {"tok"}, "email": {"owner@acme.test"}, "password": {"pw"}}
	req := httptest.NewRequest(http.MethodPost, "/dashboard/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: loginCookie, Value: "tok"})
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("%d, want 429 with Retry-After: %.300s", rec.Code, rec.Body)
	}
}

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
	a, b := addressClient(netip.MustParseAddr("192.0.2.1")), addressClient(netip.MustParseAddr("192.0.2.2"))
	steps := []struct {
		name     string
		advance  time.Duration
		email    string
		ip       loginClient
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
	c := addressClient(netip.MustParseAddr("2001:db8:1:2::7"))
	sameSubnet := addressClient(netip.MustParseAddr("2001:db8:1:2:ffff::1"))
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
	if r, _ := th.attempt(ctx, "fresh2@example.com", addressClient(netip.MustParseAddr("2001:db8:1:3::7"))); r.wait > 0 {
		t.Errorf("another /64 waits %v", r.wait)
	}
}

// The hashes a process computes at once are bounded: a login finding every slot taken
// waits briefly, then is refused.
func TestHashGate(t *testing.T) {
	g := newHashGate(1, 50*time.Millisecond)
	ctx := context.Background()
	one, two := gateSeat{share: "ip:192.0.2.1"}, gateSeat{share: "ip:192.0.2.2"}
	if !g.enter(ctx, one) {
		t.Fatal("first slot refused")
	}
	began := time.Now()
	if g.enter(ctx, two) {
		t.Fatal("a second hash ran beside the first")
	}
	if waited := time.Since(began); waited < 40*time.Millisecond {
		t.Errorf("refused after %v, want a brief wait first", waited)
	}
	if n := g.waiting(two); n != 0 {
		t.Errorf("a login that gave up is still waiting (%d)", n)
	}
	// A slot freed while a login waits is taken: a long wait, so that a stalled test
	// process (race run, loaded machine) cannot let the timer win.
	patient := newHashGate(1, time.Minute)
	patient.enter(ctx, one)
	go func() { time.Sleep(10 * time.Millisecond); patient.leave(one) }()
	if !patient.enter(ctx, two) {
		t.Fatal("a slot freed during the wait was not taken")
	}
}

// CONTRACT §17: no client holds more than its share of the hash gate. A client computes
// one hash at a time, however many logins it sends; a freed slot goes to the next client
// in turn, known browsers first, not to whoever queued most or first.
func TestHashGateShares(t *testing.T) {
	ctx := context.Background()
	g := newHashGate(2, time.Minute)
	hammer := gateSeat{share: "ip:2001:db8:66::/48"}
	owner := gateSeat{share: "device:owner", trusted: true}
	other := gateSeat{share: "ip:192.0.2.9"}
	neighbour := gateSeat{share: "ip:192.0.2.10"}

	if !g.enter(ctx, hammer) {
		t.Fatal("hammer's first login refused")
	}
	// The hammer's next logins wait though a slot is free: one hash at a time per client.
	granted := make(chan gateSeat, 16)
	wait := func(s gateSeat) {
		go func() {
			if g.enter(ctx, s) {
				granted <- s
			}
		}()
	}
	for range 5 {
		wait(hammer)
	}
	waitFor(t, func() bool { return g.waiting(hammer) == 5 })
	// Another client takes the free slot at once.
	if !g.enter(ctx, other) {
		t.Fatal("the free slot was not another client's")
	}
	// Now both slots are busy: an unknown client queues after the hammer, the owner's
	// known browser before everyone.
	wait(neighbour)
	waitFor(t, func() bool { return g.waiting(neighbour) == 1 })
	wait(owner)
	waitFor(t, func() bool { return g.waiting(owner) == 1 })

	g.leave(other)
	if s := <-granted; s != owner {
		t.Fatalf("the freed slot went to %+v, want the owner's browser", s)
	}
	g.leave(owner)
	if s := <-granted; s != neighbour {
		t.Fatalf("the next slot went to %+v, want the neighbour: the hammer computes one hash already", s)
	}
	g.leave(hammer) // its one hash ends: its next login takes the slot, in turn
	if s := <-granted; s != hammer {
		t.Fatalf("the hammer's slot went to %+v", s)
	}
	if n := g.waiting(hammer); n != 4 {
		t.Fatalf("hammer has %d logins waiting, want 4", n)
	}
	g.leave(hammer)
	g.leave(neighbour)
	for range 4 {
		<-granted
		g.leave(hammer)
	}
}

// waitFor polls cond until it holds (a goroutine reaching a lock); no time is asserted.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
	}
}

// A login finding every hash slot taken waits briefly, then gets 429 with Retry-After.
func TestLoginRefusedWhenHashesBusy(t *testing.T) {
	d := New(Deps{Store: testdb.New(t), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	d.h.hashes = newHashGate(1, 20*time.Millisecond)
	if !d.h.hashes.enter(context.Background(), gateSeat{share: "ip:203.0.113.1"}) { // another client's hash is running
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

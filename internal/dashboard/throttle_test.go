package dashboard

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/revops/revops/internal/testdb"
)

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
		{"from another address too: the email is the scope", 0, "x@example.com", b, 1, false, true},
		{"another email is free", 0, "y@example.com", a, 1, false, false},
		{"still waiting just before the window ends", 59 * time.Second, "x@example.com", b, 1, false, true},
		{"free when it has", time.Second, "x@example.com", b, 1, false, false},
		{"a success clears the email", 0, "x@example.com", b, 3, true, false},
		{"so five more pass", 0, "x@example.com", b, 5, false, false},
		{"and the sixth waits", 0, "x@example.com", b, 1, false, true},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		var wait time.Duration
		for range s.tries {
			var err error
			if wait, err = th.attempt(ctx, s.email, s.ip); err != nil {
				t.Fatal(err)
			}
		}
		if s.succeed {
			if err := th.succeeded(ctx, s.email, s.ip); err != nil {
				t.Fatal(err)
			}
		}
		if got := wait > 0; got != s.wantWait {
			t.Fatalf("%s: wait %v, want waiting=%v", s.name, wait, s.wantWait)
		}
	}
}

// One client trying many emails is stopped by its own count; successes do not use it up.
func TestThrottlePerClient(t *testing.T) {
	ctx := context.Background()
	th := newThrottle(testdb.New(t))
	c := netip.MustParseAddr("2001:db8:1:2::7")
	sameSubnet := netip.MustParseAddr("2001:db8:1:2:ffff::1")
	for i := range perClient.max {
		if i%2 == 0 { // successful logins in between are taken back from the count
			if _, err := th.attempt(ctx, "ok@example.com", c); err != nil {
				t.Fatal(err)
			}
			if err := th.succeeded(ctx, "ok@example.com", c); err != nil {
				t.Fatal(err)
			}
		}
		wait, err := th.attempt(ctx, string(rune('a'+i))+"@example.com", c)
		if err != nil || wait > 0 {
			t.Fatalf("attempt %d: wait %v, err %v", i+1, wait, err)
		}
	}
	wait, err := th.attempt(ctx, "fresh@example.com", sameSubnet)
	if err != nil || wait <= 0 {
		t.Fatalf("attempt %d from the same /64: wait %v, err %v; want a wait", perClient.max+1, wait, err)
	}
	if wait, _ := th.attempt(ctx, "fresh2@example.com", netip.MustParseAddr("2001:db8:1:3::7")); wait > 0 {
		t.Errorf("another /64 waits %v", wait)
	}
}

package dashboard

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/revops/revops/internal/config"
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

func TestClientIP(t *testing.T) {
	proxies := config.Prefixes{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, tc := range []struct {
		name    string
		trusted config.Prefixes
		peer    string
		xff     []string
		want    string
	}{
		{"no proxies: the peer", nil, "203.0.113.9:5000", nil, "203.0.113.9"},
		{"no proxies: a forged header is ignored", nil, "203.0.113.9:5000", []string{"1.2.3.4"}, "203.0.113.9"},
		{"untrusted peer: header ignored", proxies, "203.0.113.9:5000", []string{"1.2.3.4"}, "203.0.113.9"},
		{"trusted peer: the address it saw", proxies, "10.0.0.2:5000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"the right-most untrusted, not a forged left part", proxies, "10.0.0.2:5000",
			[]string{"1.2.3.4, 198.51.100.7, 10.0.0.3"}, "198.51.100.7"},
		{"several header lines form one chain", proxies, "10.0.0.2:5000",
			[]string{"1.2.3.4", "198.51.100.7, 10.0.0.3"}, "198.51.100.7"},
		{"ports and brackets", proxies, "[fd00::1]:443", []string{"[2001:db8::5]:1234, 10.0.0.3:80"}, "2001:db8::5"},
		{"garbage past the trusted hops: the last trusted hop", proxies, "10.0.0.2:5000",
			[]string{"unknown, 10.0.0.3"}, "10.0.0.3"},
		{"all trusted: the left-most", proxies, "10.0.0.2:5000", []string{"10.1.1.1, 10.0.0.3"}, "10.1.1.1"},
		{"trusted peer without a header: the peer", proxies, "10.0.0.2:5000", nil, "10.0.0.2"},
		{"mapped peer", proxies, "[::ffff:10.0.0.2]:5000", []string{"198.51.100.7"}, "198.51.100.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, "/dashboard/login", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientIP(r, tc.trusted); got.String() != tc.want {
				t.Errorf("clientIP = %s, want %s", got, tc.want)
			}
		})
	}
}

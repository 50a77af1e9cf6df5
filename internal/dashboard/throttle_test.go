package dashboard

import (
	"testing"
	"time"
)

func TestThrottle(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := newThrottle(5, time.Minute)
	th.now = func() time.Time { return now }
	steps := []struct {
		name     string
		advance  time.Duration
		fail     int // failures recorded at this step
		succeed  bool
		key      string
		wantWait bool
	}{
		{"four failures do not lock", 0, 4, false, "a", false},
		{"fifth locks", 0, 1, false, "a", true},
		{"another key is free", 0, 0, false, "b", false},
		{"still locked after 59s", 59 * time.Second, 0, false, "a", true},
		{"free after a minute", time.Second, 0, false, "a", false},
		{"counting starts again", 0, 4, false, "a", false},
		{"old failures are forgotten after the window", 16 * time.Minute, 1, false, "a", false},
		{"success clears failures", 0, 3, true, "a", false},
		{"after success four more do not lock", 0, 4, false, "a", false},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		for i := 0; i < s.fail; i++ {
			th.failed(s.key)
		}
		if s.succeed {
			th.succeeded(s.key)
		}
		if got := th.wait(s.key) > 0; got != s.wantWait {
			t.Fatalf("%s: locked=%v, want %v", s.name, got, s.wantWait)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/dashboard/api-keys", "/dashboard/api-keys"},
		{"/dashboard/webhooks", "/dashboard/webhooks"},
		{"/dashboard/deliveries/evt_1", "/dashboard/deliveries"},
		{"/dashboard/api-keys/k1/revoke", "/dashboard/api-keys"},
		{"https://evil.test/dashboard/webhooks", "/dashboard/api-keys"},
		{"//evil.test/dashboard/webhooks", "/dashboard/api-keys"},
		{`/\evil.test`, "/dashboard/api-keys"},
		{"", "/dashboard/api-keys"},
		{"/v1/whoami", "/dashboard/api-keys"},
	} {
		if got := safeNext(tc.in); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

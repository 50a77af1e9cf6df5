package clientaddr

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/revops/revops/internal/platform/config"
)

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
			if got := Of(r, tc.trusted); got.String() != tc.want {
				t.Errorf("Of = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFromTrustedProxyAndScope(t *testing.T) {
	proxies := config.Prefixes{netip.MustParsePrefix("10.0.0.0/8")}
	r, _ := http.NewRequest(http.MethodGet, "/v1/whoami", nil)
	for peer, want := range map[string]bool{"10.1.2.3:443": true, "203.0.113.9:443": false, "": false} {
		r.RemoteAddr = peer
		if got := FromTrustedProxy(r, proxies); got != want {
			t.Errorf("FromTrustedProxy(%q) = %v", peer, got)
		}
	}
	for in, want := range map[string]string{"192.0.2.1": "192.0.2.1", "::ffff:192.0.2.1": "192.0.2.1",
		"2001:db8:1:2::7": "2001:db8:1:2::/64", "2001:db8:1:2:ffff::1": "2001:db8:1:2::/64"} {
		if got := Scope(netip.MustParseAddr(in)); got != want {
			t.Errorf("Scope(%s) = %s, want %s", in, got, want)
		}
	}
}

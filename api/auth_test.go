package api_test

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
)

func TestWhoami(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ key, env, typ string }{
		{"secret sandbox", "sandbox", "secret"},
		{"public sandbox", "sandbox", "public"},
		{"secret live", "live", "secret"},
		{"public live", "live", "public"},
	} {
		r := h.do("GET", "/v1/whoami", h.key[tc.key], nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", tc.key, r.Status, r.Body)
		}
		m := r.json(t)
		org, _ := m["organization"].(map[string]any)
		if m["object"] != "api_key" || m["environment"] != tc.env || m["type"] != tc.typ || org["id"] != h.orgID || org["name"] != "Acme" {
			t.Errorf("%s: %s", tc.key, r.Body)
		}
	}
}

func TestAuthenticationFailures(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	sk := h.key["secret live"]

	revoked, err := h.keys.Create(ctx, h.orgID, "live", "secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.keys.Revoke(ctx, h.orgID, revoked.Key.ID); err != nil {
		t.Fatal(err)
	}
	rolled, err := h.keys.Create(ctx, h.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	replacement, err := h.keys.Roll(ctx, h.orgID, rolled.Key.ID, 0) // expires at once
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path, header, code string
	}{
		{"no header", "/v1/whoami", "", "missing_api_key"},
		{"wrong scheme", "/v1/whoami", "Basic " + sk, "missing_api_key"},
		{"bare key", "/v1/whoami", sk, "missing_api_key"},
		{"malformed", "/v1/whoami", "Bearer not-a-key", "invalid_api_key"},
		{"unknown", "/v1/whoami", "Bearer sk_live_" + strings.Repeat("A", 32), "invalid_api_key"},
		{"revoked", "/v1/whoami", "Bearer " + revoked.Plain, "invalid_api_key"},
		{"expired after roll", "/v1/whoami", "Bearer " + rolled.Plain, "api_key_expired"},
		{"unknown route still needs a key", "/v1/nothing-here", "", "missing_api_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r response
			if tc.header == "" {
				r = h.do("GET", tc.path, "", nil)
			} else {
				r = h.do("GET", tc.path, "", nil, "Authorization", tc.header)
			}
			expectError(t, r, http.StatusUnauthorized, tc.code)
			if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="revops"` {
				t.Errorf("WWW-Authenticate = %q", got)
			}
			if typ := r.json(t)["error"].(map[string]any)["type"]; typ != "authentication_error" {
				t.Errorf("type = %v", typ)
			}
		})
	}
	if r := h.do("GET", "/v1/whoami", replacement.Plain, nil); r.Status != 200 {
		t.Errorf("replacement key: %d %s", r.Status, r.Body)
	}
}

func TestRevocationTakesEffectAtOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	k, err := h.keys.Create(ctx, h.orgID, "live", "secret")
	if err != nil {
		t.Fatal(err)
	}
	if r := h.do("GET", "/v1/whoami", k.Plain, nil); r.Status != 200 {
		t.Fatalf("new key: %d", r.Status)
	}
	if _, err := h.keys.Revoke(ctx, h.orgID, k.Key.ID); err != nil {
		t.Fatal(err)
	}
	expectError(t, h.do("GET", "/v1/whoami", k.Plain, nil), 401, "invalid_api_key")
}

func TestRollKeepsOldKeyUntilExpiry(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	k, _ := h.keys.Create(ctx, h.orgID, "live", "secret")
	n, err := h.keys.Roll(ctx, h.orgID, k.Key.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{k.Plain, n.Plain} {
		if r := h.do("GET", "/v1/whoami", key, nil); r.Status != 200 {
			t.Errorf("key %s…: %d", key[:11], r.Status)
		}
	}
}

func TestRoutingAndKeyType(t *testing.T) {
	h := newHarness(t)
	expectError(t, h.do("GET", "/v1/no-such-route", h.key["secret live"], nil), 404, "resource_missing")
	expectError(t, h.do("DELETE", "/v1/whoami", h.key["secret live"], nil), 405, "method_not_allowed")
	// Public keys reach only whoami (and the OpenAPI document).
	expectError(t, h.do("GET", "/v1/usage/events", h.key["public live"], nil), 403, "secret_key_required")
}

func TestRateLimit(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.RateLimit = 1 }) // burst 2
	key := h.key["secret live"]
	var limited response
	for i := 0; i < 5; i++ {
		if r := h.do("GET", "/v1/whoami", key, nil); r.Status == 429 {
			limited = r
			break
		}
	}
	if limited.Status != 429 {
		t.Fatal("never rate limited at 1 req/s")
	}
	expectError(t, limited, 429, "rate_limited")
	if limited.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	// Another key has its own bucket.
	if r := h.do("GET", "/v1/whoami", h.key["secret sandbox"], nil); r.Status != 200 {
		t.Errorf("other key limited: %d", r.Status)
	}
}

// REVOPS_ENV_RATE_LIMIT bounds an environment across all its keys (CONTRACT §17): new
// keys of a busy environment find its bucket empty; the other environment has its own.
func TestEnvironmentRateLimit(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.EnvRateLimit = 1 }) // burst 2, per key: off
	live := []string{h.key["secret live"], h.key["public live"]}
	for i, key := range live {
		if r := h.do("GET", "/v1/whoami", key, nil); r.Status != 200 {
			t.Fatalf("request %d within the burst: %d %s", i+1, r.Status, r.Body)
		}
	}
	for _, key := range live {
		r := h.do("GET", "/v1/whoami", key, nil)
		expectError(t, r, 429, "rate_limited")
		if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Errorf("Retry-After %q", ra)
		}
		if !strings.Contains(string(r.Body), "environment") || !strings.Contains(string(r.Body), "rate_limit_error") {
			t.Errorf("429 body: %s", r.Body)
		}
	}
	if r := h.do("GET", "/v1/whoami", h.key["secret sandbox"], nil); r.Status != 200 {
		t.Errorf("the other environment is limited too: %d", r.Status)
	}
}

// A request the environment's bucket refuses gives its key's token back: a key is not
// used up by requests it never made.
func TestEnvironmentLimitGivesKeyTokenBack(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.RateLimit, c.EnvRateLimit = 0.01, 0.01 }) // burst 1 each
	a, b := h.key["secret live"], h.key["public live"]
	if r := h.do("GET", "/v1/whoami", b, nil); r.Status != 200 { // takes the environment's one token
		t.Fatalf("first request: %d", r.Status)
	}
	expectError(t, h.do("GET", "/v1/whoami", a, nil), 429, "rate_limited") // the environment refuses a
	// a's own token was given back: with the environment still empty, a is refused by the
	// environment again, not by its key.
	r := h.do("GET", "/v1/whoami", a, nil)
	expectError(t, r, 429, "rate_limited")
	if !strings.Contains(string(r.Body), "environment") {
		t.Errorf("a's key bucket was used up by a refused request: %s", r.Body)
	}
}

func TestHTTPSRequiredBehindProxy(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) {
		c.TLS = "proxy"
		c.TrustedProxies = config.Prefixes{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
	})
	expectError(t, h.do("GET", "/v1/whoami", h.key["secret live"], nil), 403, "https_required")
	r := h.do("GET", "/v1/whoami", h.key["secret live"], nil, "X-Forwarded-Proto", "https")
	if r.Status != 200 {
		t.Errorf("forwarded https: %d %s", r.Status, r.Body)
	}
	// HTTPS is checked before authentication.
	expectError(t, h.do("GET", "/v1/whoami", "", nil), 403, "https_required")
	if r := h.do("GET", "/healthz", "", nil); r.Status != 200 {
		t.Errorf("healthz behind proxy: %d", r.Status)
	}
}

// X-Forwarded-Proto is believed only from a trusted proxy (CONTRACT §17): a client that
// reaches the process directly cannot claim HTTPS by writing the header.
func TestForwardedProtoFromUntrustedPeerIgnored(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) {
		c.TLS = "proxy"
		c.TrustedProxies = config.Prefixes{netip.MustParsePrefix("10.0.0.0/8")} // not the test's peer
	})
	for _, path := range []string{"/v1/whoami", "/dashboard/login"} {
		expectError(t, h.do("GET", path, h.key["secret live"], nil, "X-Forwarded-Proto", "https"), 403, "https_required")
	}
}

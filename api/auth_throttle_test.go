package api_test

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/platform/apikey"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// countingStore counts the key lookups authentication makes.
type countingStore struct {
	*store.Store
	lookups atomic.Int64
}

func (s *countingStore) APIKeyByHash(ctx context.Context, hash string) (models.APIKey, error) {
	s.lookups.Add(1)
	return s.Store.APIKeyByHash(ctx, hash)
}

func randomKey(t *testing.T) string {
	t.Helper()
	k, err := apikey.Generate(models.KeySecret, "live")
	if err != nil {
		t.Fatal(err)
	}
	return k.Plain
}

// countingLookups counts the key lookups into *counted, behind a proxy on loopback: the
// test's peer is the proxy, and X-Forwarded-For names the client.
func countingLookups(counted **countingStore) harnessOption {
	return func(c *config.Config, d *api.Deps) {
		c.TrustedProxies = config.Prefixes{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
		*counted = &countingStore{Store: d.Store.(*store.Store)}
		d.Keys = keys.NewManager(*counted)
	}
}

// CONTRACT §17: past 30 failed authentications a minute from one address, that address's
// keys are checked only against the replica's recently valid keys, with no lookup.
func TestFailedAuthenticationThrottle(t *testing.T) {
	var counted *countingStore
	h := newHarness(t, countingLookups(&counted))
	const attacker, friend, neighbour = "203.0.113.7", "198.51.100.9", "192.0.2.55"
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }

	// A real client uses its key from elsewhere: it is now recently valid.
	if r := h.do("GET", "/v1/whoami", h.key["secret live"], nil, from(friend)...); r.Status != 200 {
		t.Fatalf("valid key: %d %s", r.Status, r.Body)
	}
	for i := range 31 {
		key := randomKey(t)
		if i%3 == 0 {
			key = "sk_live_short" // malformed keys count too
		}
		expectError(t, h.do("GET", "/v1/whoami", key, nil, from(attacker)...), 401, "invalid_api_key")
	}
	// A missing key is not a failure and costs nothing: still the 401 of §2.
	expectError(t, h.do("GET", "/v1/whoami", "", nil, from(attacker)...), 401, "missing_api_key")

	before := counted.lookups.Load()
	r := h.do("GET", "/v1/whoami", randomKey(t), nil, from(attacker)...)
	expectError(t, r, 429, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}
	expectError(t, h.do("GET", "/v1/deals", "sk_live_short", nil, from(attacker)...), 429, "rate_limited")
	// A valid key this replica has never seen is not looked up either.
	expectError(t, h.do("GET", "/v1/whoami", h.key["secret sandbox"], nil, from(attacker)...), 429, "rate_limited")
	if n := counted.lookups.Load() - before; n != 0 {
		t.Errorf("a throttled client cost %d key lookups, want 0", n)
	}
	// A valid key used recently, from anywhere, still passes: a real client sharing the
	// attacker's address is not locked out.
	if r := h.do("GET", "/v1/whoami", h.key["secret live"], nil, from(attacker)...); r.Status != 200 {
		t.Errorf("recently valid key from the throttled address: %d %s", r.Status, r.Body)
	}
	// Another address is unaffected: its bad key is looked up and gets the 401 of §2,
	// and its good key passes.
	expectError(t, h.do("GET", "/v1/whoami", randomKey(t), nil, from(neighbour)...), 401, "invalid_api_key")
	if r := h.do("GET", "/v1/whoami", h.key["secret sandbox"], nil, from(neighbour)...); r.Status != 200 {
		t.Errorf("valid key from another address: %d %s", r.Status, r.Body)
	}
}

// A forged X-Forwarded-For from a peer that is not a trusted proxy picks no address: the
// peer is the client, so rotating the header does not escape the throttle.
func TestFailedAuthenticationThrottleIgnoresForgedForwardedFor(t *testing.T) {
	h := newHarness(t) // no trusted proxies
	for i := range 31 {
		h.do("GET", "/v1/whoami", randomKey(t), nil, "X-Forwarded-For", netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}).String())
	}
	expectError(t, h.do("GET", "/v1/whoami", randomKey(t), nil, "X-Forwarded-For", "192.0.2.200"), 429, "rate_limited")
}

// Lookups in flight count as failures would: a burst of concurrent requests with random
// keys from one address costs no more lookups than the same requests one at a time.
func TestFailedAuthenticationThrottleHoldsUnderConcurrency(t *testing.T) {
	var counted *countingStore
	h := newHarness(t, countingLookups(&counted))
	const burst = 200
	statuses := make([]int, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			statuses[i] = h.do("GET", "/v1/whoami", randomKey(t), nil, "X-Forwarded-For", "203.0.113.7").Status
		})
	}
	wg.Wait()
	if n := counted.lookups.Load(); n > 31 {
		t.Errorf("%d concurrent random keys from one address cost %d key lookups, want at most 31", burst, n)
	}
	for i, s := range statuses {
		if s != 401 && s != 429 {
			t.Errorf("request %d: status %d, want 401 or 429", i, s)
		}
	}
	// A real client's burst with a valid key this replica has not seen yet, from another
	// address, waits for the lookups in flight instead of being refused.
	for i := range burst {
		wg.Go(func() {
			statuses[i] = h.do("GET", "/v1/whoami", h.key["secret sandbox"], nil, "X-Forwarded-For", "198.51.100.9").Status
		})
	}
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Errorf("valid key, request %d: status %d, want 200", i, s)
		}
	}
}

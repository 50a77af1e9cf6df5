package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/keys"
)

var newKeyField = regexp.MustCompile(`id="new-key" class="mono" type="text" value="([^"]+)"`)

func TestAPIKeysCreateRollRevoke(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/api-keys")
	ctx := context.Background()

	p := c.post("/dashboard/api-keys", url.Values{"csrf_token": {tok}, "type": {"secret"}})
	m := newKeyField.FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || m == nil || !strings.HasPrefix(m[1], "sk_sandbox_") {
		t.Fatalf("create: %d %.400s", p.status, p.body)
	}
	plain := m[1]
	pr, err := s.keys.Authenticate(ctx, plain)
	if err != nil || pr.Env.Name != "sandbox" || pr.Type != "secret" {
		t.Fatalf("the shown key does not authenticate: %v %+v", err, pr)
	}
	// Shown once: the list never carries it again.
	if list := c.get("/dashboard/api-keys"); strings.Contains(list.body, plain) || !strings.Contains(list.body, "sk_sandbox_…"+plain[len(plain)-4:]) {
		t.Fatalf("list shows the full key or not the masked one")
	}

	for _, tc := range []struct {
		expires string
		status  int
	}{{"1 week", http.StatusBadRequest}, {"", http.StatusBadRequest}, {"1h", http.StatusCreated}} {
		p = c.post("/dashboard/api-keys/"+pr.KeyID+"/roll", url.Values{"csrf_token": {tok}, "expires_in": {tc.expires}})
		if p.status != tc.status {
			t.Fatalf("roll %q: %d, want %d: %.300s", tc.expires, p.status, tc.status, p.body)
		}
	}
	rolled := newKeyField.FindStringSubmatch(p.body)
	if rolled == nil || !strings.Contains(p.body, "in 1 hour") {
		t.Fatalf("roll did not show the new key: %.400s", p.body)
	}
	old, _ := s.store.APIKey(ctx, u.orgID, pr.KeyID)
	if keys.State(old, time.Now()) != "expiring" || old.ExpiresAt.Sub(time.Now()) > time.Hour {
		t.Fatalf("old key after roll: %s until %v", keys.State(old, time.Now()), old.ExpiresAt)
	}

	// Revoke: confirmation page, refusal without the box, then revocation.
	if p := c.get("/dashboard/api-keys/" + pr.KeyID + "/revoke"); p.status != http.StatusOK || !strings.Contains(p.body, `name="confirm"`) {
		t.Fatalf("confirm page: %d", p.status)
	}
	if p := c.post("/dashboard/api-keys/"+pr.KeyID+"/revoke", url.Values{"csrf_token": {tok}}); p.status != http.StatusBadRequest {
		t.Fatalf("revoke without confirmation: %d", p.status)
	}
	if _, err := s.keys.Authenticate(ctx, plain); err != nil {
		t.Fatalf("unconfirmed revoke revoked the key: %v", err)
	}
	p = c.post("/dashboard/api-keys/"+pr.KeyID+"/revoke", url.Values{"csrf_token": {tok}, "confirm": {"yes"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", p.status)
	}
	if _, err := s.keys.Authenticate(ctx, plain); err != keys.ErrInvalid {
		t.Fatalf("revoked key still authenticates: %v", err)
	}
	if list := c.get(p.location); !strings.Contains(list.body, "was revoked") || !strings.Contains(list.body, "state-revoked") {
		t.Fatal("list does not show the revocation")
	}
}

func TestOrganizationIsolation(t *testing.T) {
	s := newSite(t)
	a := s.newUser("Acme", "owner@acme.test")
	b := s.newUser("Bravo", "owner@bravo.test")
	ctx := context.Background()
	ka, err := s.keys.Create(ctx, a.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	kaLive, err := s.keys.Create(ctx, a.orgID, "live", "secret")
	if err != nil {
		t.Fatal(err)
	}
	cb := s.client()
	cb.mustLogin(b)
	tok := cb.csrf("/dashboard/api-keys")
	if list := cb.get("/dashboard/api-keys").body; strings.Contains(list, ka.Key.ID) || strings.Contains(list, ka.Key.Last4) || strings.Contains(list, "Acme") {
		t.Fatal("organization B sees organization A's keys")
	}
	for _, tc := range []struct {
		name string
		do   func() page
	}{
		{"confirm page", func() page { return cb.get("/dashboard/api-keys/" + ka.Key.ID + "/revoke") }},
		{"revoke", func() page {
			return cb.post("/dashboard/api-keys/"+ka.Key.ID+"/revoke", url.Values{"csrf_token": {tok}, "confirm": {"yes"}})
		}},
		{"roll", func() page {
			return cb.post("/dashboard/api-keys/"+ka.Key.ID+"/roll", url.Values{"csrf_token": {tok}, "expires_in": {"0s"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p := tc.do(); p.status != http.StatusNotFound {
				t.Fatalf("%d, want 404", p.status)
			}
		})
	}
	if _, err := s.keys.Authenticate(ctx, ka.Plain); err != nil {
		t.Fatalf("B changed A's key: %v", err)
	}

	// Within one organization, a key of the other environment is not found either.
	ca := s.client()
	ca.mustLogin(a)
	tokA := ca.csrf("/dashboard/api-keys")
	if list := ca.get("/dashboard/api-keys").body; strings.Contains(list, kaLive.Key.ID) || !strings.Contains(list, ka.Key.ID) {
		t.Fatal("sandbox list shows live keys or misses sandbox ones")
	}
	if p := ca.post("/dashboard/api-keys/"+kaLive.Key.ID+"/revoke", url.Values{"csrf_token": {tokA}, "confirm": {"yes"}}); p.status != http.StatusNotFound {
		t.Fatalf("revoking a live key from sandbox: %d, want 404", p.status)
	}
}

// CONTRACT §17: the dashboard creates no 101st active or expiring key in an environment
// (400 too_many_keys, in words), but rolling a key at the limit works.
func TestAPIKeysLimitOnDashboard(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	ctx := context.Background()
	var first keys.Created
	for i := range keys.MaxKeys {
		k, err := s.keys.Create(ctx, u.orgID, "sandbox", "secret")
		if err != nil {
			t.Fatalf("key %d: %v", i+1, err)
		}
		if i == 0 {
			first = k
		}
	}
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/api-keys")
	p := c.post("/dashboard/api-keys", url.Values{"csrf_token": {tok}, "type": {"public"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "100 active or expiring API keys") {
		t.Fatalf("101st key: %d, want 400 too_many_keys: %.400s", p.status, p.body)
	}
	p = c.post("/dashboard/api-keys/"+first.Key.ID+"/roll", url.Values{"csrf_token": {tok}, "expires_in": {"1h"}})
	if p.status != http.StatusCreated {
		t.Fatalf("roll at the limit: %d: %.400s", p.status, p.body)
	}
	// The CLI's way (keys.Manager) is refused the same.
	if _, err := s.keys.Create(ctx, u.orgID, "sandbox", "public"); !errors.Is(err, keys.ErrTooManyKeys) {
		t.Fatalf("create through the manager: %v", err)
	}
}

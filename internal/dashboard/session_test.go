package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/dashboard"
)

func TestEveryPageRedirectsToLoginWithoutSession(t *testing.T) {
	s := newSite(t)
	c := s.client()
	for _, tc := range []struct{ method, path string }{
		{"GET", "/dashboard"},
		{"GET", "/dashboard/api-keys"},
		{"GET", "/dashboard/webhooks"},
		{"GET", "/dashboard/usage"},
		{"GET", "/dashboard/deliveries"},
		{"GET", "/dashboard/api-keys/some-id/revoke"},
		{"GET", "/dashboard/webhooks/new"},
		{"GET", "/dashboard/webhooks/00000000-0000-4000-8000-000000000000"},
		{"GET", "/dashboard/webhooks/00000000-0000-4000-8000-000000000000/delete"},
		{"POST", "/dashboard/webhooks"},
		{"POST", "/dashboard/webhooks/00000000-0000-4000-8000-000000000000"},
		{"POST", "/dashboard/webhooks/00000000-0000-4000-8000-000000000000/enable"},
		{"POST", "/dashboard/webhooks/00000000-0000-4000-8000-000000000000/delete"},
		{"POST", "/dashboard/webhooks/00000000-0000-4000-8000-000000000000/secret/reveal"},
		{"POST", "/dashboard/deliveries/00000000-0000-4000-8000-000000000000/replay"},
		{"POST", "/dashboard/api-keys"},
		{"POST", "/dashboard/environment"},
		{"POST", "/dashboard/logout"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var p page
			if tc.method == "GET" {
				p = c.get(tc.path)
			} else {
				p = c.post(tc.path, url.Values{"type": {"secret"}})
			}
			if p.status != http.StatusSeeOther || p.location != "/dashboard/login" {
				t.Fatalf("%d → %q, want 303 → /dashboard/login", p.status, p.location)
			}
		})
	}
	// A forged or expired cookie is no session either.
	u, _ := url.Parse(s.srv.URL + "/dashboard")
	c.http.Jar.SetCookies(u, []*http.Cookie{{Name: "revops_session", Value: "forged", Path: "/dashboard"}})
	if p := c.get("/dashboard/api-keys"); p.status != http.StatusSeeOther {
		t.Fatalf("forged cookie: %d", p.status)
	}
}

func TestLoginSessionLogout(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()

	p := c.login(u.email, u.password)
	if p.status != http.StatusSeeOther {
		t.Fatalf("login: %d %.200s", p.status, p.body)
	}
	var cookie *http.Cookie
	for _, ck := range (&http.Response{Header: p.header}).Cookies() {
		if ck.Name == "revops_session" {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure || cookie.Path != "/dashboard" {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Lax, not Secure over plain HTTP", cookie)
	}
	// The database keeps only the token's hash.
	if _, err := s.store.Session(context.Background(), cookie.Value, time.Now()); err == nil {
		t.Fatal("the raw cookie token is usable as a session id: tokens must be stored hashed")
	}

	home := c.get("/dashboard/api-keys")
	if home.status != http.StatusOK || !strings.Contains(home.body, u.email) || !strings.Contains(home.body, "Acme") {
		t.Fatalf("api keys page: %d %.300s", home.status, home.body)
	}
	if !strings.Contains(home.body, "Sandbox — test data only") {
		t.Error("a new session should start in sandbox")
	}

	tok := csrfField.FindStringSubmatch(home.body)[1]
	if p := c.post("/dashboard/logout", url.Values{"csrf_token": {tok}}); p.status != http.StatusSeeOther || p.location != "/dashboard/login" {
		t.Fatalf("logout: %d %q", p.status, p.location)
	}
	if p := c.get("/dashboard/api-keys"); p.status != http.StatusSeeOther {
		t.Fatalf("after logout: %d, want redirect to login", p.status)
	}
}

func TestWrongPasswordAndUnknownEmail(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	for _, tc := range []struct{ name, email, password string }{
		{"wrong password", u.email, "nope"},
		{"unknown email", "nobody@acme.test", u.password},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := s.client().login(tc.email, tc.password)
			if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "Incorrect email or password.") {
				t.Fatalf("%d %.300s", p.status, p.body)
			}
		})
	}
}

func TestSecureCookieBehindTLSProxy(t *testing.T) {
	s := newSite(t, "--tls", "proxy", "--trusted-proxies", "127.0.0.1/32,::1/128") // the test's peer is the proxy
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()
	// Without X-Forwarded-Proto: https the dashboard is refused like the API.
	if p := c.get("/dashboard/login"); p.status != http.StatusForbidden {
		t.Fatalf("plain HTTP behind proxy: %d", p.status)
	}
	req, _ := http.NewRequest("GET", s.srv.URL+"/dashboard/login", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	p := c.do(req)
	for _, ck := range (&http.Response{Header: p.header}).Cookies() {
		if !ck.Secure {
			t.Errorf("cookie %s is not Secure under REVOPS_TLS=proxy", ck.Name)
		}
	}
	tok := csrfField.FindStringSubmatch(p.body)[1]
	// The jar will not send Secure cookies over http://, so send the login cookie by hand.
	req, _ = http.NewRequest("POST", s.srv.URL+"/dashboard/login", strings.NewReader(url.Values{
		"csrf_token": {tok}, "email": {u.email}, "password": {u.password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-Proto", "https")
	req.AddCookie(&http.Cookie{Name: "revops_login_csrf", Value: tok})
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == "revops_session" && !ck.Secure {
			t.Error("session cookie is not Secure under REVOPS_TLS=proxy")
		}
	}
}

func TestCSRFRequiredOnEveryPost(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()
	c.mustLogin(u)
	k, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := s.keys.List(context.Background(), u.orgID, "")
	forms := []struct {
		path string
		form url.Values
	}{
		{"/dashboard/api-keys", url.Values{"type": {"secret"}}},
		{"/dashboard/api-keys/" + k.Key.ID + "/roll", url.Values{"expires_in": {"0s"}}},
		{"/dashboard/api-keys/" + k.Key.ID + "/revoke", url.Values{"confirm": {"yes"}}},
		{"/dashboard/environment", url.Values{"environment": {"live"}}},
		{"/dashboard/logout", url.Values{}},
	}
	for _, f := range forms {
		for _, tok := range []string{"", "wrong-token"} {
			t.Run(f.path+" token="+tok, func(t *testing.T) {
				form := url.Values{}
				for k, v := range f.form {
					form[k] = v
				}
				if tok != "" {
					form.Set("csrf_token", tok)
				}
				if p := c.post(f.path, form); p.status != http.StatusForbidden {
					t.Fatalf("%d, want 403: %.200s", p.status, p.body)
				}
			})
		}
	}
	after, _ := s.keys.List(context.Background(), u.orgID, "")
	if len(after) != len(before) || after[0].RevokedAt != nil || after[0].ExpiresAt != nil {
		t.Fatalf("a refused form changed keys: %d → %d", len(before), len(after))
	}
	if p := c.get("/dashboard/api-keys"); p.status != http.StatusOK || !strings.Contains(p.body, "Sandbox — test data only") {
		t.Fatalf("session or environment changed by a refused form: %d", p.status)
	}
	// The login form has its own token (no session yet).
	if p := s.client().post("/dashboard/login", url.Values{"email": {u.email}, "password": {u.password}}); p.status != http.StatusForbidden {
		t.Fatalf("login without csrf: %d, want 403", p.status)
	}
}

// CONTRACT §17 "Dashboard login": an attacker's failed guesses never lock the owner out;
// a correct password is refused only when its client is over its own budget; every
// login, successful or not, counts against the client's budget.
func TestLoginThrottle(t *testing.T) {
	defer dashboard.HoldThrottleClock()()                        // a window's worth of logins, however slow the machine
	s := newSite(t, "--trusted-proxies", "127.0.0.1/32,::1/128") // the test's peer is the proxy
	u := s.newUser("Acme", "owner@acme.test")
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }
	const attacker = "203.0.113.66"
	for i := range 5 {
		if p := s.client().login(u.email, "wrong", from(attacker)...); p.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i+1, p.status)
		}
	}
	for i := range 3 {
		// The attacker keeps guessing, and is slowed…
		p := s.client().login(u.email, "wrong", from(attacker)...)
		if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many failed attempts") || p.header.Get("Retry-After") == "" {
			t.Fatalf("guess %d: %d, want 429 with Retry-After: %.300s", 6+i, p.status, p.body)
		}
		// …while the owner signs in from a fresh address each time.
		s.client().mustLoginFrom(u, fmt.Sprintf("198.51.100.%d", 20+i))
	}
	// The attacker holding the right password is refused: its own budget is spent.
	if p := s.client().login(u.email, u.password, from(attacker)...); p.status != http.StatusTooManyRequests {
		t.Fatalf("correct password from the guessing client: %d, want 429", p.status)
	}

	// Successful logins are not free: one client's many logins reach its budget.
	const busy = "192.0.2.77"
	for i := range 20 {
		if p := s.client().login(u.email, u.password, from(busy)...); p.status != http.StatusSeeOther {
			t.Fatalf("login %d: %d", i+1, p.status)
		}
	}
	p := s.client().login(u.email, u.password, from(busy)...)
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many sign-in attempts from your address") {
		t.Fatalf("login 21 from one client in a minute: %d, want 429: %.300s", p.status, p.body)
	}
	// Another email from a fresh address is not locked.
	other := s.newUser("Other", "owner@other.test")
	s.client().mustLogin(other)
}

func TestEnvironmentSwitch(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/api-keys")
	for _, tc := range []struct {
		env, next, wantLoc, wantBody string
		status                       int
	}{
		{"live", "/dashboard/api-keys", "/dashboard/api-keys", "LIVE", http.StatusSeeOther},
		{"sandbox", "/dashboard/deliveries/some-event", "/dashboard/deliveries", "Sandbox — test data only", http.StatusSeeOther},
		{"live", "/dashboard/usage", "/dashboard/usage", "LIVE", http.StatusSeeOther},
		{"live", "https://evil.test/dashboard/api-keys", "/dashboard/api-keys", "LIVE", http.StatusSeeOther},
		{"staging", "/dashboard/api-keys", "", "", http.StatusBadRequest},
	} {
		t.Run(tc.env+" "+tc.next, func(t *testing.T) {
			p := c.post("/dashboard/environment", url.Values{"csrf_token": {tok}, "environment": {tc.env}, "next": {tc.next}})
			if p.status != tc.status || p.location != tc.wantLoc {
				t.Fatalf("%d → %q, want %d → %q", p.status, p.location, tc.status, tc.wantLoc)
			}
			if tc.wantBody != "" {
				if body := c.get("/dashboard/api-keys").body; !strings.Contains(body, tc.wantBody) {
					t.Fatalf("page does not show %q", tc.wantBody)
				}
			}
		})
	}
}

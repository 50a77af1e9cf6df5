package dashboard_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/testkit/testdb"
)

// bothSites serves the dashboard over a fresh PostgreSQL and a fresh SQLite database.
func bothSites(t *testing.T) map[string]*site {
	t.Helper()
	lite := testdb.Open(t, filepath.Join(t.TempDir(), "revops.db"))
	return map[string]*site{"postgres": newSite(t), "sqlite": newSiteOn(t, lite)}
}

// Hostile strings in every kind of dashboard input get a 4xx page that says what is wrong,
// and change nothing, on both databases (CONTRACT §15).
func TestHostileFormInput(t *testing.T) {
	for name, s := range bothSites(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			u := s.newUser("Acme", "owner@acme.test")
			c := s.client()
			c.mustLogin(u)
			tok := c.csrf("/dashboard/api-keys")
			keysBefore, err := s.keys.List(ctx, u.orgID, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name   string
				path   string
				form   url.Values // csrf_token added
				status int
				want   string // in the page
			}{
				{"NUL in a webhook URL", "/dashboard/webhooks", url.Values{"url": {"https://example.com/\x00"}, "method": {"POST"}},
					400, "url contains a NUL character"},
				{"bad UTF-8 in a webhook URL", "/dashboard/webhooks", url.Values{"url": {"https://example.com/\xff"}, "method": {"POST"}},
					400, "url is not valid UTF-8"},
				{"newline in a webhook URL", "/dashboard/webhooks", url.Values{"url": {"https://example.com/a\nb"}, "method": {"POST"}},
					400, "url contains a control character"},
				{"escape in a webhook URL", "/dashboard/webhooks", url.Values{"url": {"https://example.com/\x1b[31m"}, "method": {"POST"}},
					400, "url contains a control character"},
				{"credentials in a webhook URL", "/dashboard/webhooks", url.Values{"url": {"https://user:pw@example.com/hook"}, "method": {"POST"}},
					400, "url must not carry credentials"},
				{"escaped controls in a webhook URL's user", "/dashboard/webhooks", url.Values{"url": {"https://%0d%0aHost:x@example.com/"}, "method": {"POST"}},
					400, "url must not carry credentials"},
				{"C1 in a webhook method", "/dashboard/webhooks", url.Values{"url": {"https://example.com/"}, "method": {"POST\u0085"}},
					400, "method contains a control character"},
				{"NUL in a field name", "/dashboard/webhooks", url.Values{"url": {"https://example.com/"}, "x\x00": {"1"}},
					400, "name contains a NUL character"},
				{"NUL in a description", "/dashboard/webhooks", url.Values{"url": {"https://example.com/"}, "description": {"a\x00b"}},
					400, "description contains a NUL character"},
				{"bad UTF-8 in an event type", "/dashboard/webhooks", url.Values{"url": {"https://example.com/"}, "event_types": {"deal-signed", "\xfe"}},
					400, "event_types is not valid UTF-8"},
				{"NUL in an ordering", "/dashboard/webhooks", url.Values{"url": {"https://example.com/"}, "ordering": {"object\x00"}},
					400, "ordering contains a NUL character"},
				{"control in a retry interval", "/dashboard/webhooks", url.Values{"url": {"https://example.com/"}, "initial_interval": {"1h\r"}},
					400, "initial_interval contains a control character"},
				{"NUL in a replay's endpoint", "/dashboard/deliveries/00000000-0000-4000-8000-000000000000/replay", url.Values{"endpoint_id": {"\x00"}},
					400, "endpoint_id contains a NUL character"},
				{"NUL in a key type", "/dashboard/api-keys", url.Values{"type": {"secret\x00"}}, 400, "type contains a NUL character"},
				{"bad UTF-8 in an expiry", "/dashboard/api-keys/00000000-0000-4000-8000-000000000000/roll", url.Values{"expires_in": {"\xc0\xaf"}}, 400, "expires_in is not valid UTF-8"},
				{"NUL in an environment", "/dashboard/environment", url.Values{"environment": {"live\x00"}, "next": {"/dashboard/api-keys"}},
					400, "environment contains a NUL character"},
				{"control in next", "/dashboard/environment", url.Values{"environment": {"live"}, "next": {"/dashboard/\r\nx"}},
					400, "next contains a control character"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					tc.form.Set("csrf_token", tok)
					p := c.post(tc.path, tc.form)
					if p.status != tc.status || !strings.Contains(p.body, tc.want) {
						t.Fatalf("%d, want %d with %q: %.1500s", p.status, tc.status, tc.want, p.body)
					}
				})
			}
			// Hostile path ids are not found, hostile query parameters are refused.
			for path, status := range map[string]int{
				"/dashboard/api-keys/%00/revoke":                              404,
				"/dashboard/api-keys/%FF/revoke":                              404,
				"/dashboard/api-keys/a%0Ab/revoke":                            404,
				"/dashboard/api-keys/" + strings.Repeat("k", 200) + "/revoke": 404,
				"/dashboard/deliveries/%00":                                   404,
				"/dashboard/deliveries/%ED%A0%80":                             404,
				"/dashboard/deliveries?starting_after=%00":                    400,
				"/dashboard/deliveries?starting_after=%FF":                    400,
				"/dashboard/deliveries?status=%00":                            400,
				"/dashboard/api-keys?notice=%1B":                              400,
				"/dashboard/deliveries?%00=1":                                 400,
				"/dashboard/deliveries?endpoint_id=%00":                       400,
				"/dashboard/deliveries?endpoint_id=x":                         400,
				"/dashboard/webhooks/%00":                                     404,
				"/dashboard/webhooks/nope/delete":                             404,
			} {
				if p := c.get(path); p.status != status {
					t.Errorf("GET %s: %d, want %d: %.300s", path, p.status, status, p.body)
				}
			}
			// Nothing was written: the same keys, no endpoint, still in sandbox.
			keysAfter, err := s.keys.List(ctx, u.orgID, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(keysAfter) != len(keysBefore) {
				t.Errorf("keys %d → %d", len(keysBefore), len(keysAfter))
			}
			env, err := s.store.Environment(ctx, u.orgID, "sandbox")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.store.WebhookEndpoint(ctx, env); err == nil {
				t.Error("a refused form saved a webhook endpoint")
			}
			if p := c.get("/dashboard/api-keys"); !strings.Contains(p.body, "Sandbox — test data only") {
				t.Error("a refused form switched the environment")
			}
		})
	}
}

// The login form shows its own faults inline, with a fresh token to try again.
func TestHostileLogin(t *testing.T) {
	for name, s := range bothSites(t) {
		t.Run(name, func(t *testing.T) {
			u := s.newUser("Acme", "owner@acme.test")
			for _, tc := range []struct {
				name, email, password string
				status                int
				want                  string
			}{
				{"NUL in the email", "owner@acme.test\x00", u.password, 400, "email contains a NUL character"},
				{"bad UTF-8 in the email", "owner\xff@acme.test", u.password, 400, "email is not valid UTF-8"},
				{"control character in the email", "owner@acme.test\x1b", u.password, 400, "email contains a control character"},
				{"tab in the email", "owner@\tacme.test", u.password, 400, "email contains a control character"},
				{"NUL in the password", u.email, u.password + "\x00", 400, "password contains a NUL character"},
				{"bad UTF-8 in the password", u.email, "\xff\xfe", 400, "password is not valid UTF-8"},
				{"an overlong email", strings.Repeat("a", 300) + "@acme.test", u.password, 400, "at most 254 characters"},
				// A password may hold a tab: it is simply wrong here.
				{"tab in the password", u.email, "a\tb", 401, "Incorrect email or password"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					p := s.client().login(tc.email, tc.password)
					if p.status != tc.status || !strings.Contains(p.body, tc.want) || !strings.Contains(p.body, `name="csrf_token"`) {
						t.Fatalf("%d, want %d and the login form with %q: %.1500s", p.status, tc.status, tc.want, p.body)
					}
					if strings.ContainsAny(p.body, "\x00\x1b") {
						t.Error("the page carries the hostile bytes back")
					}
				})
			}
			// Only the tab password was a guess: three more failures, and the fifth try,
			// with the right password, still gets in.
			c := s.client()
			for i := range 3 {
				if p := c.login(u.email, "wrong"); p.status != http.StatusUnauthorized {
					t.Fatalf("try %d: %d", i+1, p.status)
				}
			}
			c.mustLogin(u)
		})
	}
}

// Dashboard bodies are forms of at most 64 KiB: a larger one is 413, multipart is 415,
// before and after login; nothing is read past the limit.
func TestDashboardBodyLimits(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/api-keys")
	loginTok := s.client().csrf("/dashboard/login")
	big := strings.Repeat("x", 100<<10)
	for _, tc := range []struct {
		name, path string
		form       url.Values
	}{
		{"login", "/dashboard/login", url.Values{"csrf_token": {loginTok}, "email": {u.email}, "password": {big}}},
		{"create key", "/dashboard/api-keys", url.Values{"csrf_token": {tok}, "type": {"secret"}, "pad": {big}}},
	} {
		t.Run(tc.name+" 100 KiB", func(t *testing.T) {
			p := c.post(tc.path, tc.form)
			if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "larger than 64 KiB") {
				t.Fatalf("%d, want 413: %.500s", p.status, p.body)
			}
		})
		t.Run(tc.name+" multipart", func(t *testing.T) {
			var body bytes.Buffer
			w := multipart.NewWriter(&body)
			for k, vs := range tc.form {
				if k != "pad" && k != "password" {
					_ = w.WriteField(k, vs[0])
				}
			}
			_ = w.WriteField("type", "secret")
			_ = w.Close()
			req, _ := http.NewRequest(http.MethodPost, c.base+tc.path, &body)
			req.Header.Set("Content-Type", w.FormDataContentType())
			if p := c.do(req); p.status != http.StatusUnsupportedMediaType || !strings.Contains(p.body, "application/x-www-form-urlencoded") {
				t.Fatalf("%d, want 415: %.500s", p.status, p.body)
			}
		})
	}
	// Just under the limit is an ordinary form.
	form := url.Values{"csrf_token": {tok}, "type": {"secret"}, "pad": {strings.Repeat("x", 60<<10)}}
	if p := c.post("/dashboard/api-keys", form); p.status != http.StatusCreated {
		t.Fatalf("60 KiB form: %d", p.status)
	}
	keys, _ := s.keys.List(context.Background(), u.orgID, "")
	if len(keys) != 1 {
		t.Fatalf("%d keys, want only the one from the form under the limit", len(keys))
	}
}

// A password reset ends the user's sessions: a cookie that worked stops working.
func TestPasswordResetEndsSessions(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	other := s.newUser("Other", "owner@other.test")
	c, bystander := s.client(), s.client()
	c.mustLogin(u)
	bystander.mustLogin(other)
	if p := c.get("/dashboard/api-keys"); p.status != http.StatusOK {
		t.Fatalf("signed in: %d", p.status)
	}
	password, err := orgs.ResetPassword(context.Background(), s.store, u.email)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.get("/dashboard/api-keys"); p.status != http.StatusSeeOther || p.location != "/dashboard/login" {
		t.Fatalf("old session after reset: %d → %q, want the login page", p.status, p.location)
	}
	if p := bystander.get("/dashboard/api-keys"); p.status != http.StatusOK {
		t.Fatalf("another user's session ended too: %d", p.status)
	}
	if p := s.client().login(u.email, u.password); p.status != http.StatusUnauthorized {
		t.Fatalf("old password: %d", p.status)
	}
	s.client().mustLogin(user{orgID: u.orgID, email: u.email, password: password})
}

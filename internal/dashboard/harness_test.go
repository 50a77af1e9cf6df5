package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/internal/testkit/testdb"
)

// site is a real API server (dashboard included) over a fresh PostgreSQL database.
type site struct {
	t     *testing.T
	srv   *httptest.Server
	store *store.Store
	keys  *keys.Manager
	cfg   config.Config
}

// user is a dashboard user of one organization.
type user struct {
	orgID, email, password string
}

func newSite(t *testing.T, args ...string) *site {
	t.Helper()
	return newSiteOn(t, testdb.New(t), args...)
}

// newSiteOn serves the dashboard over st: a SQLite store, or a second replica's
// connection to a database another site uses.
func newSiteOn(t *testing.T, st *store.Store, args ...string) *site {
	t.Helper()
	cfg := apitest.Config(t, args...)
	deps := apitest.Deps(cfg, st)
	return &site{t: t, srv: apitest.Serve(t, deps), store: st, keys: deps.Keys, cfg: cfg}
}

func (s *site) newUser(org, email string) user {
	s.t.Helper()
	o, pw, err := orgs.Create(context.Background(), s.store, org, email)
	if err != nil {
		s.t.Fatal(err)
	}
	return user{orgID: o.ID, email: email, password: pw}
}

// client is a browser-like HTTP client with a cookie jar that does not follow redirects.
type client struct {
	t    *testing.T
	base string
	http *http.Client
}

func (s *site) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: s.t, base: s.srv.URL, http: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type page struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (c *client) do(req *http.Request) page {
	c.t.Helper()
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return page{status: res.StatusCode, body: string(b), location: res.Header.Get("Location"), header: res.Header}
}

func (c *client) get(path string) page {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.do(req)
}

func (c *client) post(path string, form url.Values, hdr ...string) page {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf reads the CSRF token of the forms on a page.
func (c *client) csrf(path string) string {
	c.t.Helper()
	p := c.get(path)
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		c.t.Fatalf("no csrf token on %s (%d): %.300s", path, p.status, p.body)
	}
	return m[1]
}

// login signs in, with extra headers (X-Forwarded-For), and returns the response to the
// login POST.
func (c *client) login(email, password string, hdr ...string) page {
	c.t.Helper()
	tok := c.csrf("/dashboard/login")
	return c.post("/dashboard/login", url.Values{"csrf_token": {tok}, "email": {email}, "password": {password}}, hdr...)
}

// mustLogin signs in and fails the test unless it worked.
func (c *client) mustLogin(u user) {
	c.t.Helper()
	if p := c.login(u.email, u.password); p.status != http.StatusSeeOther || p.location != "/dashboard/api-keys" {
		c.t.Fatalf("login: %d → %q: %.300s", p.status, p.location, p.body)
	}
}

// mustLoginFrom is mustLogin from the client address ip, named by X-Forwarded-For (the
// site must trust the test's peer as a proxy).
func (c *client) mustLoginFrom(u user, ip string) {
	c.t.Helper()
	if p := c.login(u.email, u.password, "X-Forwarded-For", ip); p.status != http.StatusSeeOther || p.location != "/dashboard/api-keys" {
		c.t.Fatalf("login from %s: %d → %q: %.300s", ip, p.status, p.location, p.body)
	}
}

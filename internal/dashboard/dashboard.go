// Package dashboard serves the server-rendered dashboard under /dashboard (CONTRACT §11):
// login with server-side sessions, a live/sandbox switch, API keys, webhook endpoints
// (CONTRACT §13) and deliveries. Every form works without JavaScript and carries a CSRF token.
package dashboard

import (
	"bytes"
	"context"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/sessions"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/web"
)

// Storage is what the dashboard reads itself and hands to the domain functions it calls,
// the API's for the same actions (events, sessions), declared here as api.Storage is in
// api: internal/app passes *store.Store. Every write goes through a domain function.
type Storage interface {
	events.EndpointStore // events.Store, and one endpoint's deliveries
	sessions.Store
	replay.Store
	meters.Store
	webhook.EndpointsStore
	viewers
	// EndpointStatHours reads an endpoint's hourly attempt rollups (the Webhooks page's
	// figures and chart, webhooks_figures.go).
	EndpointStatHours(ctx context.Context, env models.Env, endpointID string, from, to time.Time) ([]store.StatHour, error)
}

// viewers reads who signs in and who is signed in (session.go, device.go).
type viewers interface {
	Session(ctx context.Context, id string, now time.Time) (models.DashboardSession, error)
	User(ctx context.Context, id string) (models.OrganizationUser, error)
	UserByEmail(ctx context.Context, email string) (models.OrganizationUser, error)
	Organization(ctx context.Context, id string) (models.Organization, error)
	Environment(ctx context.Context, orgID, name string) (models.Env, error)
	KnownDevice(ctx context.Context, id, email string, now time.Time) (bool, error)
}

var _ Storage = (*store.Store)(nil)

// Deps is what the dashboard needs; internal/app passes the API's own parts (app.NewHandler).
type Deps struct {
	Config config.Config
	Store  Storage
	Keys   *keys.Manager
	Log    *slog.Logger
	// Endpoints is the API's own service of /v1/webhook_endpoints (internal/app builds
	// it once): the forms follow its rules and the manual test goes through its Sender.
	Endpoints *webhook.Endpoints
	// Meters reads the Usage page's values (CONTRACT §18) under the API's own gate
	// (internal/app builds it once).
	Meters *meters.Queries
}

// handler holds the dependencies of every dashboard page.
type handler struct {
	cfg      config.Config
	store    Storage
	keys     *keys.Manager
	log      *slog.Logger
	throttle *throttle
	hashes   *hashGate // bounds the bcrypt comparisons of logins running at once
	// endpoints is the service of /v1/webhook_endpoints: the forms follow its rules.
	endpoints *webhook.Endpoints
	meters    *meters.Queries
	pages     map[string]*template.Template
	now       func() time.Time
}

// Dashboard is the dashboard's handler, built once by New and mounted by Routes.
type Dashboard struct{ h *handler }

// New builds the dashboard: its pages are parsed here, once.
func New(d Deps) *Dashboard {
	h := &handler{
		cfg: d.Config, store: d.Store, keys: d.Keys, log: d.Log,
		throttle: newThrottle(d.Store), hashes: newHashGate(defaultHashSlots(), hashWait), endpoints: d.Endpoints,
		meters: d.Meters, pages: mustParsePages(), now: time.Now,
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	return &Dashboard{h: h}
}

// securityHeaders keeps pages out of frames and caches: a key is shown once and must not
// linger in a shared cache or the back button.
func securityHeaders(c *gin.Context) {
	hd := c.Writer.Header()
	hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(c.Request.URL.Path, "/dashboard/static/") {
		hd.Set("Cache-Control", "no-store")
	}
	c.Next()
}

func staticFiles() gin.HandlerFunc {
	sub, err := fs.Sub(web.FS, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix("/dashboard/static", http.FileServerFS(sub))
	return func(c *gin.Context) {
		if strings.HasSuffix(c.Param("file"), "/") {
			c.String(http.StatusNotFound, "not found")
			return
		}
		c.Header("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(c.Writer, c.Request)
	}
}

var funcs = template.FuncMap{
	"when": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"ptr":       func(t time.Time) *time.Time { return &t },
	"fieldArgs": retryFieldArgs,
	// enableArgs is what the layout's "reenableForm" needs: the endpoint and the CSRF token.
	"enableArgs": func(id, csrf string) map[string]string { return map[string]string{"ID": id, "CSRF": csrf} },
}

// mustParsePages builds one template per page: the shared layout plus the page's content.
func mustParsePages() map[string]*template.Template {
	names, err := fs.Glob(web.FS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		pages[base] = template.Must(template.New(base).Funcs(funcs).ParseFS(web.FS, "templates/layout.html", n))
	}
	return pages
}

// view is what every page template receives.
type view struct {
	Title  string
	Nav    string // which menu entry is current
	Viewer *viewer
	Path   string // where the environment switch comes back to
	Notice string
	Error  string
	Data   any
}

// render writes a page; it executes into a buffer first so a template fault is a clean 500.
func (h *handler) render(c *gin.Context, status int, page string, v view) {
	if v.Viewer == nil {
		v.Viewer = currentViewer(c)
	}
	v.Path = c.Request.URL.Path
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, "layout", v); err != nil {
		h.log.Error("render dashboard page", "page", page, "err", err)
		c.String(http.StatusInternalServerError, "The page could not be shown.")
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// fail shows an error page for err, with the status the API gives it (httperr.Of): client
// mistakes with their message, a missing object and any other fault in the page's own
// words, the details of a fault in the log only.
func (h *handler) fail(c *gin.Context, err error) {
	p := httperr.Of(err)
	msg := p.Message
	switch p.Code {
	case httperr.CodeNotFound:
		msg = "This object does not exist in this environment."
	case httperr.CodeInternal:
		msg = "Something went wrong. Try again; if it persists, check the server log."
		h.log.Error("dashboard request failed", "path", c.Request.URL.Path, "err", err)
	}
	if p.RetryAfter > 0 {
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(p.RetryAfter.Seconds()))))
	}
	h.render(c, p.Status, "error", view{Title: http.StatusText(p.Status), Error: msg})
}

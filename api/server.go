// Package api is the HTTP adapter: gin handlers that decode, validate, call one function
// of the business layer and encode. Domain errors become the CONTRACT §4 envelope in fail.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/openapi"
	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/domain/deals"
	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/buildinfo"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/tracing"
)

// Check is a readiness probe of one dependency.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
	// Optional dependencies are reported ("unreachable") without making the process
	// unready: usage and object changes keep working without them (Temporal, CONTRACT §10).
	Optional bool
}

// Storage is the database as the handlers hand it to the domain functions they call:
// each domain package declares the part it needs, and internal/app passes the one
// *store.Store, which is all of them. The API itself names no store type.
type Storage interface {
	accounts.Store
	deals.Store
	events.Store
	usage.Store
	orgs.Reader
	replay.Store
	meters.Store
	webhook.EndpointsStore
	idempotency.Keys
}

// Deps is what the API needs; internal/app builds each part once per process and wires it.
type Deps struct {
	Config config.Config
	Store  Storage
	Keys   *keys.Manager
	Log    *slog.Logger
	Ready  []Check
	// Endpoints serves the webhook endpoints (CONTRACT §8, §13) here and in the
	// dashboard, with the process's one Sender for the manual tests.
	Endpoints *webhook.Endpoints
	// Meters reads meters' values (CONTRACT §18) here and in the dashboard, under the
	// process's one gate on values queries; the other meter routes call the package's
	// functions with Store.
	Meters *meters.Queries
}

// Server holds the handlers' dependencies.
type Server struct {
	cfg config.Config
	// links is what an event object points to outside the API (the Temporal UI), from
	// cfg: data the replay's transaction makes the object with.
	links     events.Links
	store     Storage
	keys      *keys.Manager
	log       *slog.Logger
	ready     []Check
	endpoints *webhook.Endpoints
	meters    *meters.Queries
	limiter   *limiter
	// openapi is GET /v1/openapi.json's body, or openapiErr why it could not be built.
	openapi    []byte
	openapiErr error
}

// New builds the gin engine of the API: the Server and its parts first, then the
// middleware and the routes. It decides no wiring: every part comes built in d
// (internal/app), and internal/app mounts the dashboard on the engine it returns, behind
// the same HTTPS and authentication middleware.
func New(d Deps) *gin.Engine {
	if d.Endpoints == nil || d.Meters == nil {
		// A wiring fault, not a request's: without them the webhook and meter routes
		// would answer 500. internal/app builds both.
		panic("api.New: Deps.Endpoints and Deps.Meters are required")
	}
	s := &Server{cfg: d.Config, links: events.Links{TemporalUI: d.Config.TemporalUIURL, Namespace: d.Config.TemporalNamespace},
		store: d.Store, keys: d.Keys, log: d.Log, ready: d.Ready,
		endpoints: d.Endpoints, meters: d.Meters, limiter: newLimiter(d.Config.RateLimit, d.Config.EnvRateLimit)}
	if s.log == nil {
		s.log = slog.Default()
	}
	// The document depends only on the public URL: built once, served as bytes.
	s.openapi, s.openapiErr = openapi.Document(s.cfg.PublicURL)

	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// gin believes X-Forwarded-For from every peer by default; c.ClientIP() must agree
	// with clientaddr (CONTRACT §17): only the proxies listed are believed.
	if err := r.SetTrustedProxies(trustedProxies(s.cfg.TrustedProxies)); err != nil {
		panic("api.New: trusted proxies: " + err.Error()) // config has parsed them already
	}
	r.ContextWithFallback = true
	if tracing.On() { // first: every other step runs inside the request's span
		r.Use(traceRequests)
	}
	// Order is CONTRACT §3's: HTTPS and authentication here, on every request; the rest
	// on the route groups (routes).
	r.Use(observeRequests, withRequestID(s.log), recoverPanics, requireHTTPS(s.cfg.TLS == "proxy", s.cfg.TrustedProxies), authenticate(s.keys, newAuthThrottle(), s.cfg.TrustedProxies))
	s.routes(r)
	return r
}

// trustedProxies is the list in gin's words; nil trusts no proxy.
func trustedProxies(p config.Prefixes) []string {
	var out []string
	for _, x := range p {
		out = append(out, x.String())
	}
	return out
}

// healthz also names the build (version, revision, Temporal server and SDK), so an
// operator sees which release each replica runs.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok", "build": buildinfo.Read()})
}

func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 3*time.Second)
	defer cancel()
	checks := gin.H{}
	var down []string
	for _, ch := range s.ready {
		err := ch.Check(ctx)
		if err != nil && ch.Optional {
			checks[ch.Name] = "unreachable" // its own monitor logs the outage, once
			continue
		}
		if err != nil {
			checks[ch.Name] = "down"
			down = append(down, ch.Name)
			s.log.Warn("readiness check failed", "dependency", ch.Name, "err", err)
			continue
		}
		checks[ch.Name] = "up"
	}
	if len(down) > 0 {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "down": down, "checks": checks})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": checks})
}

package api

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/revops/revops/internal/clientaddr"
	"github.com/revops/revops/internal/config"
	"github.com/revops/revops/internal/keys"
)

const (
	ctxRequestID = "revops.request_id"
	ctxLogger    = "revops.logger"
	ctxPrincipal = "revops.principal"
)

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// principal is the authenticated caller; only routes behind authenticate call it.
func principal(c *gin.Context) keys.Principal {
	p, _ := c.Get(ctxPrincipal)
	pr, _ := p.(keys.Principal)
	return pr
}

// withRequestID gives every response an X-Request-Id and logs the request when done.
func withRequestID(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := "req_" + rand.Text()[:20]
		c.Set(ctxRequestID, id)
		c.Set(ctxLogger, log.With("request_id", id))
		c.Header("X-Request-Id", id)
		start := time.Now()
		c.Next()
		attrs := []any{
			"request_id", id, "method", c.Request.Method, "path", c.Request.URL.Path,
			"status", c.Writer.Status(), "latency_ms", float64(time.Since(start).Microseconds()) / 1000,
		}
		if p := principal(c); p.KeyID != "" {
			attrs = append(attrs, "key", p.Prefix, "environment", p.Env.Name)
		}
		level := slog.LevelInfo
		if c.Writer.Status() >= 500 {
			level = slog.LevelError
		}
		log.Log(c.Request.Context(), level, "request", attrs...)
	}
}

// recoverPanics turns a panic into a 500 without internals; the stack goes to the log only.
func recoverPanics(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			logger(c).Error("panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			abort(c, http.StatusInternalServerError, typeAPI, "internal_error",
				"An internal error occurred. Retry later; quote the request id if it persists.", "")
		}
	}()
	c.Next()
}

// isAPI tells whether a path is under /v1 (the authenticated API).
func isAPI(path string) bool { return path == "/v1" || strings.HasPrefix(path, "/v1/") }

// requireHTTPS enforces CONTRACT §2 behind a TLS-terminating proxy. X-Forwarded-Proto
// is believed only from a trusted proxy (§17): a client that reaches the process directly
// cannot claim HTTPS by writing the header itself.
func requireHTTPS(proxy bool, trusted config.Prefixes) gin.HandlerFunc {
	return func(c *gin.Context) {
		if proxy && c.Request.TLS == nil && !forwardedHTTPS(c.Request, trusted) &&
			(isAPI(c.Request.URL.Path) || strings.HasPrefix(c.Request.URL.Path, "/dashboard")) {
			abort(c, http.StatusForbidden, typePermission, "https_required", "Requests must be made over HTTPS.", "")
			return
		}
		c.Next()
	}
}

func forwardedHTTPS(r *http.Request, trusted config.Prefixes) bool {
	return clientaddr.FromTrustedProxy(r, trusted) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// authenticate runs on every /v1 path before routing, so an unknown route still needs a key.
func authenticate(km *keys.Manager) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !isAPI(c.Request.URL.Path) {
			c.Next()
			return
		}
		h := c.GetHeader("Authorization")
		scheme, token, _ := strings.Cut(h, " ")
		if h == "" || !strings.EqualFold(scheme, "Bearer") {
			fail(c, keys.ErrMissing)
			return
		}
		p, err := km.Authenticate(c.Request.Context(), strings.TrimSpace(token))
		if err != nil {
			fail(c, err)
			return
		}
		c.Set(ctxPrincipal, p)
		c.Next()
	}
}

// requireSecret keeps public keys to the few routes they may call.
func requireSecret(c *gin.Context) {
	if principal(c).Type != "secret" {
		abort(c, http.StatusForbidden, typePermission, "secret_key_required",
			"This route needs a secret key (sk_…); public keys reach only GET /v1/whoami and GET /v1/openapi.json.", "")
		return
	}
	c.Next()
}

// limiter is a token bucket per API key.
type limiter struct {
	rps   rate.Limit
	burst int
	mu    sync.Mutex
	keys  map[string]*rate.Limiter
}

func newLimiter(rps float64) *limiter {
	return &limiter{rps: rate.Limit(rps), burst: int(math.Max(1, 2*rps)), keys: map[string]*rate.Limiter{}}
}

func (l *limiter) handle(c *gin.Context) {
	if l.rps <= 0 {
		c.Next()
		return
	}
	id := principal(c).KeyID
	l.mu.Lock()
	b, ok := l.keys[id]
	if !ok {
		b = rate.NewLimiter(l.rps, l.burst)
		l.keys[id] = b
	}
	l.mu.Unlock()
	r := b.Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		c.Header("Retry-After", fmt.Sprint(int(math.Ceil(d.Seconds()))))
		abort(c, http.StatusTooManyRequests, typeRateLimit, "rate_limited",
			"Too many requests with this API key. Retry after the number of seconds in Retry-After.", "")
		return
	}
	c.Next()
}

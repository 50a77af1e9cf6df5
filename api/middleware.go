package api

import (
	"crypto/rand"
	"errors"
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

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/clientaddr"
	"github.com/revops/revops/internal/platform/config"
)

// withRequestID gives every response an X-Request-Id and logs the request when done.
func withRequestID(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := "req_" + rand.Text()[:20]
		withRequest(c, id, log.With("request_id", id))
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

// The refusals of the middleware; httperr.Of words them and chooses their status.
var (
	errPanic             = errors.New("handler panicked") // a 500 without internals
	errHTTPSRequired     = apperr.Forbidden("https_required", "Requests must be made over HTTPS.")
	errSecretKeyRequired = apperr.Forbidden("secret_key_required",
		"This route needs a secret key (sk_…); public keys reach only GET /v1/whoami and GET /v1/openapi.json.")
)

// recoverPanics turns a panic into a 500 without internals; the stack goes to the log only.
func recoverPanics(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			logger(c).Error("panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			fail(c, errPanic)
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
			fail(c, errHTTPSRequired)
			return
		}
		c.Next()
	}
}

func forwardedHTTPS(r *http.Request, trusted config.Prefixes) bool {
	return clientaddr.FromTrustedProxy(r, trusted) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// authenticate runs on every /v1 path before routing, so an unknown route still needs a
// key. A client past the failed-authentication throttle (CONTRACT §3, §17) is checked
// only against the keys this replica saw valid lately: a known key passes, anything else
// gets 429 without a database lookup. A missing key is not a failure: it costs nothing.
func authenticate(km *keys.Manager, fails *authThrottle, trusted config.Prefixes) gin.HandlerFunc {
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
		client := clientaddr.Scope(clientaddr.Of(c.Request, trusted))
		var p keys.Principal
		var err error
		wait := fails.admit(c.Request.Context(), client)
		if wait > 0 {
			p, err = km.AuthenticateKnown(c.Request.Context(), strings.TrimSpace(token))
		} else {
			p, err = km.Authenticate(c.Request.Context(), strings.TrimSpace(token))
		}
		failed := errors.Is(err, keys.ErrInvalid) || errors.Is(err, keys.ErrExpired) || errors.Is(err, keys.ErrNotRecent)
		if wait == 0 {
			fails.done(client, failed)
		}
		if failed && wait > 0 {
			tooMany(c, wait, "Too many failed authentications from this address.")
			return
		}
		if err != nil {
			fail(c, err)
			return
		}
		withPrincipal(c, p)
		c.Next()
	}
}

// requireSecret keeps public keys to the few routes they may call.
func requireSecret(c *gin.Context) {
	if principal(c).Type != "secret" {
		fail(c, errSecretKeyRequired)
		return
	}
	c.Next()
}

// limiter holds the token buckets of CONTRACT §3 and §17, in this replica: one per API
// key and one per environment across all its keys. A request takes a token from its
// key's bucket, then from its environment's; refused by either, it gives back what it
// took and gets 429 rate_limited with Retry-After.
type limiter struct {
	perKey, perEnv *buckets
}

func newLimiter(keyRPS, envRPS float64) *limiter {
	return &limiter{perKey: newBuckets(keyRPS), perEnv: newBuckets(envRPS)}
}

func (l *limiter) handle(c *gin.Context) {
	p, now := principal(c), time.Now()
	wait, giveBack := l.perKey.take(p.KeyID, now)
	if wait > 0 {
		tooMany(c, wait, "Too many requests with this API key.")
		return
	}
	if wait, _ := l.perEnv.take(p.Env.ID, now); wait > 0 {
		giveBack()
		tooMany(c, wait, "Too many requests in this environment across its API keys.")
		return
	}
	c.Next()
}

func tooMany(c *gin.Context, d time.Duration, why string) {
	fail(c, apperr.Busy(nil, apperr.CodeRateLimited, d, "%s", why))
}

// buckets is a token bucket per id: rps tokens a second, burst twice that; rps 0 is off.
type buckets struct {
	rps   rate.Limit
	burst int
	mu    sync.Mutex
	by    map[string]*rate.Limiter
}

func newBuckets(rps float64) *buckets {
	return &buckets{rps: rate.Limit(rps), burst: int(math.Max(1, 2*rps)), by: map[string]*rate.Limiter{}}
}

// take takes a token for id, or, when none is free, takes nothing and says how long to
// wait. giveBack returns a token taken (a request the next limit refuses); it works only
// at the time of the taking (rate.Reservation restores nothing acted on before), so both
// limits are asked at one now.
func (b *buckets) take(id string, now time.Time) (wait time.Duration, giveBack func()) {
	if b.rps <= 0 {
		return 0, func() {}
	}
	b.mu.Lock()
	l, ok := b.by[id]
	if !ok {
		l = rate.NewLimiter(b.rps, b.burst)
		b.by[id] = l
	}
	b.mu.Unlock()
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, func() {}
	}
	return 0, func() { r.CancelAt(now) }
}

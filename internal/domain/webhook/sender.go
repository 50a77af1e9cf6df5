// Package webhook sends signed webhook requests (the one place that speaks HTTP to
// receivers: the delivery activity and the manual test both use Sender) and manages
// webhook endpoints (Endpoints: CONTRACT §13, and the §8 singular routes on the oldest).
package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/platform/ssrf"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/models"
)

// Limits of CONTRACT §8.
const (
	DefaultTimeout = 30 * time.Second // the whole exchange, body included
	MaxGETURL      = 16 << 10         // a GET URL longer than this is never sent
	maxResponse    = 64 << 10         // what is read of a response to find the sentence
	maxExcerpt     = 1 << 10          // what is kept of it
	maxReason      = 256              // what is kept of a transport error's text
	UserAgent      = "Revops-Webhooks/1"
)

// ReasonPayloadTooLarge is the error of a GET whose URL would pass MaxGETURL.
const ReasonPayloadTooLarge = "payload_too_large_for_get"

// Sender sends one signed request and judges the answer.
type Sender struct {
	Client      *http.Client
	AckSentence string        // the body of a 200 must contain it
	Timeout     time.Duration // 0 means DefaultTimeout; tests shorten it
	// publicPeers counts every address as public (tests, whose receivers listen on
	// loopback, to see the excerpt an endpoint with custom headers keeps).
	publicPeers bool
}

// Message is one request to send.
type Message struct {
	URL     string
	Method  string // POST or GET
	ID      string // webhook-id
	Body    []byte // the JSON text (for GET, the value of the payload parameter)
	Secrets []string
	At      time.Time // webhook-timestamp: the time of the attempt
	// Headers are the endpoint's custom headers (CONTRACT §25), sent as given (net/http
	// writes their names in canonical form). Their values are masked in what is kept of
	// the answer, and an answer from a private address keeps no excerpt at all.
	Headers map[string]string
}

// SigningSecrets are the current key and, during the overlap of a rotation or a change of
// scheme, the previous one: HMAC secrets or ed25519 private keys, each signing in its own
// scheme (signing.Sign reads the prefix, CONTRACT §25).
func SigningSecrets(ep models.WebhookEndpoint, now time.Time) []string {
	secrets := []string{ep.Secret}
	if ep.PreviousSecret != "" && ep.PreviousUntil != nil && now.Before(*ep.PreviousUntil) {
		secrets = append(secrets, ep.PreviousSecret)
	}
	return secrets
}

// Result is the outcome of one request. Reason is "" on success; otherwise a short,
// secret-free explanation fit for logs, attempt records and Temporal history.
type Result struct {
	StatusCode int
	Excerpt    string
	Duration   time.Duration
	Reason     string
	Permanent  bool // no retry can succeed
	// RetryAfter is the wait a 429 or 503 asked for in its Retry-After header (0: none,
	// or none usable); the delivery activity judges it against its retry policy.
	RetryAfter time.Duration
}

// Gone tells whether the receiver answered 410 Gone: it wants no more deliveries, so the
// delivery activity ends the delivery and its endpoint is disabled (CONTRACT §23).
func (r Result) Gone() bool { return r.StatusCode == http.StatusGone }

// OK tells whether the receiver acknowledged the message.
func (r Result) OK() bool { return r.Reason == "" }

// loadClient builds the HTTP client for receivers: SSRF-guarded dials, no proxy (it would
// dial on our behalf, past the guard), no redirects, extra roots from caFile (PEM).
func loadClient(allowPrivate bool, caFile string) (*http.Client, error) {
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("read webhook CA file: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("webhook CA file %s holds no PEM certificate", caFile)
		}
	}
	return newClient(allowPrivate, roots), nil
}

func newClient(allowPrivate bool, roots *x509.CertPool) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         ssrf.NewDialer(allowPrivate).DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        100,
		// Go's default keeps 2 idle connections per host: with more deliveries in flight
		// to one receiver the rest paid a new TLS handshake each (docs/benchmarks.md).
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// NewSender builds the sender of a process from its settings (REVOPS_WEBHOOK_* and the
// service name's acknowledgement sentence). A caFile it cannot read, or that holds no
// certificate, is an error: the process stops rather than send without it.
func NewSender(allowPrivate bool, caFile, ackSentence string) (*Sender, error) {
	client, err := loadClient(allowPrivate, caFile)
	if err != nil {
		return nil, err
	}
	return &Sender{Client: client, AckSentence: ackSentence, Timeout: DefaultTimeout}, nil
}

// NewClientWithRoots is the receivers' client with an explicit root pool (tests trusting one CA only).
func NewClientWithRoots(allowPrivate bool, roots *x509.CertPool) *http.Client {
	return newClient(allowPrivate, roots)
}

func (s *Sender) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}

// Send makes one attempt. The deadline (Timeout, or the earlier deadline of ctx) covers
// connecting, the request, the response headers and reading the body.
func (s *Sender) Send(ctx context.Context, m Message) (res Result) {
	start := time.Now()
	req, perm := s.request(m)
	if perm != "" {
		return Result{Reason: perm, Permanent: true}
	}
	if tracing.On() {
		// The request's own span, whose context the receiver gets in traceparent, so that
		// its tracing joins the trace (CONTRACT §19). Named by the method only: the URL's
		// path and query are the receiver's and may hold its secrets.
		var span trace.Span
		ctx, span = otel.Tracer("revops/webhook").Start(ctx, m.Method+" webhook", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("http.request.method", m.Method), attribute.String("revops.event_id", m.ID)))
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
		defer func() {
			if res.StatusCode != 0 {
				span.SetAttributes(attribute.Int("http.response.status_code", res.StatusCode))
			}
			if res.Reason != "" {
				span.SetStatus(codes.Error, res.Reason) // short, without URL or secret (reason)
			}
			span.End()
		}()
	}
	timeout := s.timeout()
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = time.Until(d) // the caller's budget: the activity keeps a reserve to record
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	mk, to := newMasker(m.Headers), &peer{}
	if mk.active() {
		ctx = to.trace(ctx)
	}
	res = s.exchange(req.WithContext(ctx), timeout, mk, to)
	res.Duration = time.Since(start)
	return res
}

// request builds the signed request; a non-empty string is a permanent fault.
func (s *Sender) request(m Message) (*http.Request, string) {
	u, err := url.Parse(m.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, "invalid url"
	}
	var body io.Reader
	if m.Method == http.MethodGet {
		q := u.Query()
		q.Set("payload", string(m.Body))
		u.RawQuery = q.Encode()
		if len(u.String()) > MaxGETURL {
			return nil, ReasonPayloadTooLarge
		}
	} else {
		body = bytes.NewReader(m.Body)
	}
	req, err := http.NewRequest(m.Method, u.String(), body)
	if err != nil {
		return nil, "invalid request"
	}
	ts := m.At
	if ts.IsZero() {
		ts = time.Now()
	}
	for name, v := range m.Headers { // first: Revops' own headers win (refused names, §25)
		req.Header.Set(name, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("webhook-id", m.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", signing.Header(m.Secrets, m.ID, ts, m.Body))
	return req, ""
}

// exchange sends req and judges the answer. What is kept of it (excerpt, error text)
// is masked by mk, under req's context (stopped); with custom headers, an answer from a private address (to) keeps no
// excerpt: such a receiver is often a debugging tool that echoes every request.
func (s *Sender) exchange(req *http.Request, timeout time.Duration, mk *masker, to *peer) Result {
	ctx := req.Context()
	resp, err := s.Client.Do(req)
	if err != nil {
		return Result{Reason: mk.reason(ctx, err, timeout)}
	}
	defer func() { _ = resp.Body.Close() }()
	res := Result{StatusCode: resp.StatusCode}
	if asksToWait(resp.StatusCode) {
		res.RetryAfter = RetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if !mk.active() || s.publicPeers || !to.private() {
		// Cut by the read limit, or ended early by an error: the end may start a value.
		res.Excerpt = mk.excerpt(ctx, body, len(body) == maxResponse || err != nil)
	}
	switch {
	case err != nil:
		res.Reason = mk.reason(ctx, err, timeout)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.Reason = fmt.Sprintf("redirect not followed (status %d)", resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		res.Reason = fmt.Sprintf("status %d", resp.StatusCode)
	case !bytes.Contains(body, []byte(s.AckSentence)):
		res.Reason = "ack sentence missing"
	}
	return res
}

// reason turns a transport error into a short message without URL or secret. Transport
// errors may quote what the receiver sent (a malformed status line), so the text is
// made storable like an excerpt.
func reason(err error, timeout time.Duration) string {
	text, _ := transportReason(err, timeout)
	return clip(text, maxReason)
}

// transportReason is the text of a transport error; quotes: it is the error's own text
// (the others are fixed), which may quote what the receiver sent.
func transportReason(err error, timeout time.Duration) (text string, quotes bool) {
	var (
		certErr    *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return models.AttemptTimeoutPrefix + timeout.Round(time.Millisecond).String(), false
	case errors.Is(err, ssrf.ErrNotAllowed):
		return "destination not allowed", false
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", false
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset", false
	case errors.As(err, &unknownCA):
		return "tls: certificate signed by an unknown authority", false
	case errors.As(err, &hostErr):
		return "tls: certificate does not match the host", false
	case errors.As(err, &invalidErr), errors.As(err, &certErr):
		return "tls: invalid certificate", false
	case errors.As(err, &recordErr):
		return "tls: handshake failed (not an HTTPS server?)", false
	case strings.Contains(err.Error(), "no such host"):
		return "host not found", false
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // url.Error would repeat the URL, query string included
	}
	return "request failed: " + err.Error(), true
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// excerpt keeps at most the first KiB of a response.
func excerpt(b []byte) string {
	return clip(string(b[:min(len(b), maxExcerpt+utf8.UTFMax)]), maxExcerpt)
}

// clip makes s storable and keeps at most its first n bytes, cut on a character
// boundary. A character split by the first slice becomes a U+FFFD past n, cut away.
func clip(s string, n int) string {
	s = storable(s[:min(len(s), n+utf8.UTFMax)])
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// storable replaces NUL and invalid UTF-8 (each run of bad bytes) with U+FFFD: what a
// receiver sends back is stored and put into Temporal history, and PostgreSQL text and
// protobuf strings refuse both, so a receiver could otherwise make its own attempt
// unrecordable (CONTRACT §15).
func storable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

package revops

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultWebhookTolerance is how far a delivery's webhook-timestamp may be from now,
// either way, as the Standard Webhooks libraries allow: it bounds replays of a captured
// request.
const DefaultWebhookTolerance = 5 * time.Minute

// maxWebhookBody bounds the body VerifyRequest reads; Revops's payloads are far smaller.
const maxWebhookBody = 4 << 20

// Verification errors, for errors.Is.
var (
	ErrWebhookHeaders   = errors.New("revops: webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrWebhookTimestamp = errors.New("revops: webhook: timestamp outside the tolerance")
	ErrWebhookSignature = errors.New("revops: webhook: no valid signature")
)

// Webhooks verifies the deliveries of one endpoint, signed per the Standard Webhooks
// specification: with its secret (hmac-sha256 endpoints, "v1" signatures) or, for an
// ed25519 endpoint, with its public key ("v1a" signatures). It is safe for concurrent use.
type Webhooks struct {
	key       []byte            // the HMAC key of a whsec_ secret
	public    ed25519.PublicKey // or the key of a whpk_ public key
	tolerance time.Duration
	now       func() time.Time
}

// String and GoString keep the secret out of %v, %+v and %#v (a verifier logged as part of
// a struct, say).
func (w *Webhooks) String() string   { return "revops.Webhooks{secret: redacted}" }
func (w *Webhooks) GoString() string { return w.String() }

// WebhookOption configures NewWebhooks.
type WebhookOption func(*Webhooks)

// WithTolerance sets how far webhook-timestamp may be from now (default
// DefaultWebhookTolerance).
func WithTolerance(d time.Duration) WebhookOption {
	return func(w *Webhooks) { w.tolerance = d }
}

// NewWebhooks returns a verifier for the endpoint's signing key as the API shows it: its
// secret ("whsec_…") for an hmac-sha256 endpoint, or its public_key ("whpk_…") for an
// ed25519 one, whose "v1a" signatures it then checks with crypto/ed25519. While a rotated
// key (or the key of the endpoint's previous scheme) still signs, deliveries carry a
// signature under each, so the new key verifies them as soon as you switch to it.
func NewWebhooks(key string, opts ...WebhookOption) (*Webhooks, error) {
	w := &Webhooks{tolerance: DefaultWebhookTolerance, now: time.Now}
	if rest, ok := strings.CutPrefix(key, "whpk_"); ok {
		pub, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, errors.New("revops: the webhook public key is not whpk_ followed by the base64 of a 32-byte ed25519 key")
		}
		w.public = ed25519.PublicKey(pub)
	} else {
		secret, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(key, "whsec_"))
		if err != nil || len(secret) == 0 {
			// The message never repeats the secret.
			return nil, errors.New("revops: the webhook secret is not whsec_ followed by base64")
		}
		w.key = secret
	}
	for _, o := range opts {
		o(w)
	}
	return w, nil
}

// Verify checks a delivery's signature and timestamp, then decodes its body. header
// holds webhook-id, webhook-timestamp and webhook-signature; body is the raw request
// body, exactly as received (decode nothing before verifying).
func (w *Webhooks) Verify(header http.Header, body []byte) (*WebhookEvent, error) {
	id, ts, sigs := headerValue(header, "webhook-id"), headerValue(header, "webhook-timestamp"), headerValue(header, "webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return nil, ErrWebhookHeaders
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not Unix seconds", ErrWebhookTimestamp, ts)
	}
	if d := w.now().Sub(time.Unix(secs, 0)); d > w.tolerance || d < -w.tolerance {
		return nil, fmt.Errorf("%w: %s away from now", ErrWebhookTimestamp, d.Round(time.Second))
	}
	if !w.signed(id, ts, body, sigs) {
		return nil, ErrWebhookSignature
	}
	var ev WebhookEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("revops: webhook: decode the payload: %w", err)
	}
	return &ev, nil
}

// signed says whether any entry of the space-separated header signs "id.timestamp.body"
// under the verifier's key: a "v1a,<base64>" ed25519 signature for a public key, else a
// "v1,<base64>" HMAC-SHA256, compared in constant time. Entries of the other scheme are
// skipped, as the specification asks of versions a verifier does not hold a key for.
func (w *Webhooks) signed(id, ts string, body []byte, header string) bool {
	if w.public != nil {
		return w.signedEd25519(id, ts, body, header)
	}
	mac := hmac.New(sha256.New, w.key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	ok := false
	for _, entry := range strings.Fields(header) {
		version, sig, found := strings.Cut(entry, ",")
		if !found || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			ok = true // keep going: the time taken does not tell which entry matched
		}
	}
	return ok
}

// signedEd25519 says whether any "v1a,<base64>" entry of header is an ed25519 signature
// of "id.timestamp.body" under the verifier's public key.
func (w *Webhooks) signedEd25519(id, ts string, body []byte, header string) bool {
	msg := make([]byte, 0, len(id)+len(ts)+2+len(body))
	msg = append(append(append(msg, id+"."...), ts+"."...), body...)
	for _, entry := range strings.Fields(header) {
		version, sig, found := strings.Cut(entry, ",")
		if !found || version != "v1a" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && ed25519.Verify(w.public, msg, got) {
			return true // a public key proves nothing secret: no need to hide which entry
		}
	}
	return false
}

// VerifyRequest verifies a delivery as an http.Handler receives it: the body of a POST,
// or the payload query parameter of a GET (endpoints whose method is GET). It reads
// r.Body.
func (w *Webhooks) VerifyRequest(r *http.Request) (*WebhookEvent, error) {
	if r.Method == http.MethodGet {
		return w.Verify(r.Header, []byte(r.URL.Query().Get("payload")))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody))
	if err != nil {
		return nil, fmt.Errorf("revops: webhook: read the body: %w", err)
	}
	return w.Verify(r.Header, body)
}

// headerValue reads a header whether or not its key was canonicalised (a map built by
// hand may hold "webhook-id").
func headerValue(h http.Header, name string) string {
	// Several lines of one header are one list (RFC 9110 §5.3): a proxy may split the
	// rotation's signatures over lines.
	var vs []string
	for k, v := range h {
		if strings.EqualFold(k, name) {
			vs = append(vs, v...)
		}
	}
	return strings.Join(vs, " ")
}

// Timestamp is the event's time (event.time, Unix seconds as text).
func (h WebhookEventHeader) Timestamp() (time.Time, error) {
	secs, err := strconv.ParseInt(h.Time, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("revops: event time %q is not Unix seconds", h.Time)
	}
	return time.Unix(secs, 0).UTC(), nil
}

// WebhookEvent decodes the event's payload (the exact body its deliveries carry) into
// the typed webhook body.
func (e *Event) WebhookEvent() (*WebhookEvent, error) {
	b, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("revops: event %s: encode the payload: %w", e.ID, err)
	}
	var ev WebhookEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, fmt.Errorf("revops: event %s: decode the payload: %w", e.ID, err)
	}
	return &ev, nil
}

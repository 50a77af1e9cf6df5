// Package listener is the local webhook receiver of `revops listen`: it verifies each
// delivery's signature, prints it, and acknowledges (or refuses, or relays to the
// developer's own app).
package listener

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/internal/platform/tracing"
)

// Handler receives webhooks.
type Handler struct {
	Secrets   func() []string // keys to accept: whsec_ secrets (v1) and whpk_ public keys (v1a)
	Ack       string          // the acknowledgement sentence
	Fail      bool            // refuse every delivery (to watch retries)
	ForwardTo string          // relay to this URL and answer with its response
	Client    *http.Client    // for relaying
	Out       io.Writer
	Now       func() time.Time

	mu sync.Mutex // one printed line at a time
}

// Received is what the handler understood of one request.
type Received struct {
	ID, Type, ObjectKind, ObjectID string
	TraceID                        string // from traceparent: the change's trace, when Revops traces
	Verified                       bool
	Problem                        string
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := payload(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := h.inspect(r.Header, body)
	status, reply := http.StatusOK, h.Ack
	switch {
	case h.Fail:
		status, reply = http.StatusInternalServerError, "revops listen --fail: refusing on purpose"
	case h.ForwardTo != "":
		status, reply = h.forward(r.Context(), r, body)
	}
	h.print(rec, status)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, reply)
}

// payload is the signed text: the POST body, or the GET query parameter "payload".
func payload(r *http.Request) ([]byte, error) {
	if r.Method == http.MethodGet {
		return []byte(r.URL.Query().Get("payload")), nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return b, nil
}

func (h *Handler) inspect(hdr http.Header, body []byte) Received {
	var rec Received
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		rec.Problem = "body is not a JSON object"
		return rec
	}
	var ev struct{ ID, Type string }
	if err := json.Unmarshal(msg["event"], &ev); err != nil {
		_ = json.Unmarshal(msg["event"], &ev.Type) // a manual test sends the name only
		ev.ID = "(test)"
	}
	rec.ID, rec.Type = ev.ID, ev.Type
	rec.ObjectKind, rec.ObjectID = objectOf(msg)
	rec.TraceID = tracing.TraceID(hdr.Get("traceparent"))
	id, ts, sigs := hdr.Get("webhook-id"), hdr.Get("webhook-timestamp"), hdr.Get("webhook-signature")
	if sigs == "" {
		rec.Problem = "unsigned"
		return rec
	}
	rec.Problem = "signature does not match the endpoint's key"
	for _, s := range h.Secrets() {
		err := signing.Verify(s, id, ts, sigs, body, h.now(), 5*time.Minute)
		if err == nil {
			rec.Verified, rec.Problem = true, ""
			break
		}
		if err == signing.ErrTimestamp {
			rec.Problem = "timestamp outside the 5-minute tolerance"
		}
	}
	return rec
}

// objectKinds are the body members that carry what an event is about, in the order they
// are looked for: the seed's objects, then the operational types' (CONTRACT §13, §23,
// §24; delivery-exhausted's is its endpoint, not its "delivery").
var objectKinds = []string{"deal", "account", "webhook_endpoint", "meter_alert"}

// objectOf names what a delivered body is about: the first member of objectKinds it has,
// else (a type added to the catalog later) the first other member, by name, that is an
// object with an id, so that every event type prints like the others.
func objectOf(msg map[string]json.RawMessage) (kind, id string) {
	idOf := func(raw json.RawMessage) (string, bool) {
		var obj struct {
			ID      *string `json:"id"`
			AlertID *string `json:"alert_id"` // meter-threshold-crossed's meter_alert
		}
		if json.Unmarshal(raw, &obj) != nil {
			return "", false
		}
		switch {
		case obj.ID != nil:
			return *obj.ID, true
		case obj.AlertID != nil:
			return *obj.AlertID, true
		}
		return "", false
	}
	for _, k := range objectKinds {
		if raw, ok := msg[k]; ok {
			id, _ := idOf(raw)
			return k, id
		}
	}
	names := slices.Sorted(maps.Keys(msg))
	for _, k := range names {
		if k == "event" {
			continue
		}
		if id, ok := idOf(msg[k]); ok {
			return k, id
		}
	}
	return "", ""
}

// notForwarded are the headers of one connection (RFC 9110 §7.6.1) and those the relaying
// client writes itself. Every other header reaches the developer's app as Revops sent it:
// the webhook-* and traceparent headers, and the endpoint's custom headers (CONTRACT §25),
// which the app may check (an X-Api-Key).
var notForwarded = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Host": true, "Content-Length": true, "Accept-Encoding": true,
}

func (h *Handler) forward(ctx context.Context, r *http.Request, body []byte) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 25*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, h.ForwardTo, bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway, "forward: " + err.Error()
	}
	if r.Method == http.MethodGet {
		req.URL.RawQuery = r.URL.RawQuery
		req.Body, req.ContentLength = nil, 0
	}
	for k, vs := range r.Header {
		if !notForwarded[http.CanonicalHeaderKey(k)] {
			req.Header[k] = vs
		}
	}
	res, err := h.Client.Do(req)
	if err != nil {
		return http.StatusBadGateway, "forward: " + err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, string(b)
}

func (h *Handler) print(rec Received, status int) {
	check := "signature ok"
	if !rec.Verified {
		check = "NOT VERIFIED: " + rec.Problem
	}
	obj := ""
	if rec.ObjectKind != "" {
		obj = textcheck.Printable(rec.ObjectKind, maxPrinted) + " " + textcheck.Printable(rec.ObjectID, maxPrinted)
	}
	trace := ""
	if rec.TraceID != "" {
		trace = "  trace " + rec.TraceID
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Columns wide enough for the longest type (meter-threshold-crossed) and object
	// (webhook_endpoint <uuid>), so that operational events line up with the others.
	fmt.Fprintf(h.Out, "%s  %-23s %-38s %-53s %s  → %d%s\n", h.now().UTC().Format("15:04:05"),
		textcheck.Printable(rec.Type, maxPrinted), textcheck.Printable(rec.ID, maxPrinted), obj, check, status, trace)
}

// maxPrinted bounds each field of a printed line taken from a body: far above any id or
// type Revops sends.
const maxPrinted = 80

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

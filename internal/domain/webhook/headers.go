package webhook

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
)

// Custom headers of CONTRACT §25: the rules of a headers member, and the merge of a
// create or PATCH into an endpoint's headers. Their values are secrets: no fault message
// here quotes one.
const (
	MaxHeaders           = 10
	MaxHeaderNameLength  = 64   // characters (a token is ASCII: bytes)
	MaxHeaderValueLength = 4096 // bytes
	// Redacted stands for a header value wherever it is not the answer of the write
	// that set it: reads, lists, idempotent replays.
	Redacted = "<redacted>"
)

// refusedHeaders are the names an endpoint may not set (case-insensitive): Revops'
// own (webhook-*, user-agent, the trace context), the body's description, and what
// the HTTP layer or an intermediary owns (hop-by-hop, framing, routing).
var refusedHeaders = map[string]bool{
	"host": true, "connection": true, "keep-alive": true, "te": true, "trailer": true,
	"transfer-encoding": true, "upgrade": true, "expect": true, "accept-encoding": true,
	"range": true, "forwarded": true, "traceparent": true, "tracestate": true,
	"baggage": true, "user-agent": true,
}

// refusedPrefixes are the name prefixes an endpoint may not use (lower case).
var refusedPrefixes = []string{"webhook-", "content-", "proxy-", "x-forwarded-"}

// RefusedHeaderName tells whether an endpoint may not set the header name.
func RefusedHeaderName(name string) bool {
	lower := strings.ToLower(name)
	if refusedHeaders[lower] {
		return true
	}
	for _, p := range refusedPrefixes {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}

// HeaderValue is one member of a headers object: a string, or null (remove the
// header). Any other JSON value decodes too, as a fault checkHeaders names with the
// header's param (a decoder's type error would name only "headers").
type HeaderValue struct {
	Value     string
	Null      bool
	notString bool
}

// HeaderString is a header's value, as a body sets it.
func HeaderString(v string) HeaderValue { return HeaderValue{Value: v} }

// HeaderNull removes a header, as null in a body does.
func HeaderNull() HeaderValue { return HeaderValue{Null: true} }

// UnmarshalJSON keeps a string or null, and notes anything else.
func (h *HeaderValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*h = HeaderValue{Null: true}
	case len(b) > 0 && b[0] == '"':
		*h = HeaderValue{}
		return json.Unmarshal(b, &h.Value)
	default:
		*h = HeaderValue{notString: true}
	}
	return nil
}

// MarshalJSON writes the value back (tests, fingerprints of decoded bodies).
func (h HeaderValue) MarshalJSON() ([]byte, error) {
	if h.Null || h.notString {
		return []byte("null"), nil
	}
	return json.Marshal(h.Value)
}

// HeaderChanges is a validated headers member: the values it sets (names as sent) and
// the names it removes (null, any case). Applied to the endpoint's headers as locked in
// the write's transaction, so that concurrent PATCHes of different names both hold.
type HeaderChanges struct {
	Clear  bool // "headers": null: remove every header first
	Set    map[string]string
	Remove []string
}

// apply is cur with c applied: a name matching a current one in any case replaces it
// (the new spelling kept); nil when no header is left.
func (c HeaderChanges) apply(cur map[string]string) map[string]string {
	next := map[string]string{}
	if !c.Clear {
		for k, v := range cur {
			next[k] = v
		}
	}
	drop := func(name string) {
		for k := range next {
			if strings.EqualFold(k, name) {
				delete(next, k)
			}
		}
	}
	for _, name := range c.Remove {
		drop(name)
	}
	for name, v := range c.Set {
		drop(name)
		next[name] = v
	}
	if len(next) == 0 {
		return nil
	}
	return next
}

// mergeHeaders is cur with c applied, refused when more than MaxHeaders would be left.
func mergeHeaders(cur map[string]string, c HeaderChanges) (map[string]string, error) {
	next := c.apply(cur)
	if len(next) > MaxHeaders {
		var fs apperr.Faults
		fs.Invalid("headers", "An endpoint may have at most %d headers; this would leave it %d.", MaxHeaders, len(next))
		return nil, fs.Err()
	}
	return next, nil
}

// checkHeaders validates a headers member (null values remove a header) and returns it
// as changes. Every fault names headers.<name>; names are checked in sorted order, so
// that the faults are listed the same way each time.
func checkHeaders(fs *apperr.Faults, in map[string]HeaderValue) HeaderChanges {
	c := HeaderChanges{Set: map[string]string{}}
	if len(in) > 2*MaxHeaders { // at most MaxHeaders set and as many removed
		fs.Invalid("headers", "headers may name at most %d headers.", MaxHeaders)
		return c
	}
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[string]string{} // lower case → name as sent
	for _, name := range names {
		param := "headers." + name
		nameOK := checkHeaderName(fs, param, name)
		if first, dup := seen[strings.ToLower(name)]; dup {
			fs.Invalid(param, "headers names %s twice (%q and %q): header names are case-insensitive.", strings.ToLower(name), first, name)
			nameOK = false
		}
		seen[strings.ToLower(name)] = name
		switch v := in[name]; {
		case v.notString:
			fs.Invalid(param, "%s must be a string, or null to remove the header.", param)
		case v.Null:
			c.Remove = append(c.Remove, name)
		case checkHeaderValue(fs, param, v.Value) && nameOK:
			c.Set[name] = v.Value
		}
	}
	return c
}

// checkHeaderName: an RFC 9110 token of at most MaxHeaderNameLength characters, not one
// of the refused names.
func checkHeaderName(fs *apperr.Faults, param, name string) bool {
	switch {
	case !textcheck.LineOK(fs, param, name):
	case name == "" || len(name) > MaxHeaderNameLength || !isToken(name):
		fs.Invalid(param, "A header name must be 1 to %d letters, digits or any of !#$%%&'*+-.^_`|~ (an RFC 9110 token).", MaxHeaderNameLength)
	case RefusedHeaderName(name):
		fs.Invalid(param, "%s cannot be set: webhook-*, content-*, proxy-*, x-forwarded-*, the hop-by-hop and framing headers, the trace context and user-agent are Revops' own.", name)
	default:
		return true
	}
	return false
}

// checkHeaderValue: 1 to MaxHeaderValueLength visible ASCII characters and spaces, not
// starting or ending with a space (a receiver's HTTP parser would strip it), and not the
// placeholder of a redacted value (sent back from a read, it would replace the secret).
// Non-ASCII is refused: RFC 9110 leaves its meaning to each receiver (obs-text).
func checkHeaderValue(fs *apperr.Faults, param, v string) bool {
	switch {
	case !textcheck.LineOK(fs, param, v):
	case v == Redacted:
		fs.Invalid(param, "%s is %q, the placeholder reads show: send the header's value, or leave the header out to keep it.", param, Redacted)
	case v == "" || len(v) > MaxHeaderValueLength:
		fs.Invalid(param, "%s must be 1 to %d bytes.", param, MaxHeaderValueLength)
	case !visibleASCII(v):
		fs.Invalid(param, "%s must hold visible ASCII characters and spaces only.", param)
	case v[0] == ' ' || v[len(v)-1] == ' ':
		fs.Invalid(param, "%s must not start or end with a space.", param)
	default:
		return true
	}
	return false
}

// isToken tells whether s is an RFC 9110 token (tchar+).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// names are the names c sets (none for nil).
func (c *HeaderChanges) names() []string {
	if c == nil {
		return nil
	}
	return HeaderNames(c.Set)
}

// HeaderNames are the names of h.
func HeaderNames[V any](h map[string]V) []string {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	return names
}

// SetHeaderNames are the names a headers member sets (its non-null values).
func SetHeaderNames(in map[string]HeaderValue) []string {
	var names []string
	for name, v := range in {
		if !v.Null && !v.notString {
			names = append(names, name)
		}
	}
	return names
}

// redactedHeaders is h as reads show it: every name, each value Redacted.
func redactedHeaders(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for name := range h {
		out[name] = Redacted
	}
	return out
}

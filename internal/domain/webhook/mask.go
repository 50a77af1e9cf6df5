package webhook

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// Custom header values in what is kept of an answer (CONTRACT §25). A receiver may echo
// the request's headers in its body (debugging endpoints, request bins): the excerpt an
// attempt keeps, and a transport error's text, show "<redacted>" for each value instead.

// masker hides an endpoint's custom header values; the zero masker hides nothing.
type masker struct {
	forms   [][]byte // each value as sent and as a JSON string's content, longest first
	longest int
}

func newMasker(headers map[string]string) masker {
	seen := map[string]bool{}
	var m masker
	for _, v := range headers {
		for _, form := range valueForms(v) {
			if form == "" || seen[form] {
				continue
			}
			seen[form] = true
			m.forms = append(m.forms, []byte(form))
			m.longest = max(m.longest, len(form))
		}
	}
	// Longest first: a value holding another is replaced whole.
	sort.Slice(m.forms, func(i, j int) bool { return len(m.forms[i]) > len(m.forms[j]) })
	return m
}

// valueForms are v as sent and as a receiver's JSON encoder may quote it (with and
// without HTML escapes: `<` as \u003c; with `/` as `\/` too, as PHP's json_encode
// writes it, which base64 keys hold).
func valueForms(v string) []string {
	forms := []string{v}
	if quoted, err := json.Marshal(v); err == nil {
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		quoted := bytes.TrimSpace(buf.Bytes())
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	for _, f := range forms[1:] {
		if strings.Contains(f, "/") {
			forms = append(forms, strings.ReplaceAll(f, "/", `\/`))
		}
	}
	return forms
}

func (m masker) active() bool { return len(m.forms) > 0 }

// mask is b with every form of every value replaced by Redacted.
func (m masker) mask(b []byte) []byte {
	for _, f := range m.forms {
		b = bytes.ReplaceAll(b, f, []byte(Redacted))
	}
	return b
}

// excerpt is what an attempt keeps of body, masked before it is cut, so that a value
// straddling the cut leaves no prefix behind. truncated: body is the first part of a
// longer answer, whose end may hold the start of a value: that end is dropped first.
func (m masker) excerpt(body []byte, truncated bool) string {
	if !m.active() {
		return excerpt(body)
	}
	if truncated {
		body = m.withoutPartialEnd(body)
	}
	return excerpt(m.mask(bytes.Clone(body)))
}

// withoutPartialEnd is b without its end while that end is the start of a value (in any
// form). Once no end of it is, every occurrence of a value in it is whole, and mask
// replaces it.
func (m masker) withoutPartialEnd(b []byte) []byte {
	for {
		start := len(b)
		for _, f := range m.forms {
			for i := max(0, len(b)-len(f)+1); i < start; i++ {
				if b[i] == f[0] && bytes.HasPrefix(f, b[i:]) {
					start = i
					break
				}
			}
		}
		if start == len(b) {
			return b
		}
		b = b[:start]
	}
}

// reason is reason(err, timeout) masked before it is cut: a transport error may quote
// what the receiver sent (a malformed status line echoing a header).
func (m masker) reason(err error, timeout time.Duration) string {
	if !m.active() {
		return reason(err, timeout)
	}
	return clip(string(m.mask([]byte(transportReason(err, timeout)))), maxReason)
}

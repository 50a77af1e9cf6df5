package webhook

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// The §8 PUT's body (url, method, enabled) under the rules of a create, as Put applies them.
func TestValidateEndpoint(t *testing.T) {
	str := func(s string) *string { return &s }
	no := false
	tests := []struct {
		name   string
		in     EndpointFields
		faults []string // "param:code"
	}{
		{"defaults", EndpointFields{URL: str("https://example.com/h")}, nil},
		{"get disabled", EndpointFields{URL: str("https://example.com/h"), Method: str("GET"), Enabled: &no}, nil},
		{"missing url", EndpointFields{}, []string{"url:parameter_missing"}},
		{"http", EndpointFields{URL: str("http://example.com/")}, []string{"url:parameter_invalid"}},
		{"relative", EndpointFields{URL: str("/hooks")}, []string{"url:parameter_invalid"}},
		{"no host", EndpointFields{URL: str("https:///x")}, []string{"url:parameter_invalid"}},
		{"2048 chars ok", EndpointFields{URL: str("https://e.com/" + strings.Repeat("a", 2048-14))}, nil},
		{"2049 chars", EndpointFields{URL: str("https://e.com/" + strings.Repeat("a", 2049-14))}, []string{"url:parameter_invalid"}},
		{"every fault", EndpointFields{URL: str("ftp://x"), Method: str("DELETE")}, []string{"url:parameter_invalid", "method:parameter_invalid"}},
		// CONTRACT §15: NUL, invalid UTF-8 and control characters (C1 ones pass url.Parse).
		{"url NUL", EndpointFields{URL: str("https://e.com/\x00")}, []string{"url:invalid_string"}},
		{"url invalid UTF-8", EndpointFields{URL: str("https://e.com/\xff")}, []string{"url:invalid_string"}},
		{"url newline", EndpointFields{URL: str("https://e.com/a\nb")}, []string{"url:invalid_string"}},
		{"url C1", EndpointFields{URL: str("https://e.com/\u0085")}, []string{"url:invalid_string"}},
		{"url non-ASCII path", EndpointFields{URL: str("https://e.com/zürich")}, nil},
		{"method NUL", EndpointFields{URL: str("https://e.com/"), Method: str("POST\x00")}, []string{"method:invalid_string"}},
		// CONTRACT §26.
		{"ordered", EndpointFields{URL: str("https://e.com/"), Ordering: str("object")}, nil},
		{"ordering unknown", EndpointFields{URL: str("https://e.com/"), Ordering: str("fifo")}, []string{"ordering:parameter_invalid"}},
		{"ordering NUL", EndpointFields{URL: str("https://e.com/"), Ordering: str("none\x00")}, []string{"ordering:invalid_string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := ValidateEndpointFields(tt.in, true, models.DefaultRetryPolicy, "")
			var got []string
			var verr *apperr.ValidationError
			if errors.As(err, &verr) {
				for _, f := range verr.Faults {
					got = append(got, f.Param+":"+f.Code)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.faults, ",") {
				t.Fatalf("faults %v, want %v", got, tt.faults)
			}
			if err == nil && (set.Method == nil || *set.Method == "" || (tt.in.Enabled == nil && !*set.Enabled)) {
				t.Fatalf("defaults not applied: %+v", set)
			}
		})
	}
}

func TestTestBody(t *testing.T) {
	for _, typ := range EventTypes {
		b, err := TestBody(typ)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		key := strings.SplitN(typ, "-", 2)[0]
		if string(m["event"]) != `"`+typ+`"` || m[key] == nil || len(m) != 2 || !strings.HasPrefix(string(b), `{"event":`) {
			t.Errorf("%s: body %s", typ, b)
		}
	}
	if _, err := TestBody("deal-exploded"); err == nil {
		t.Error("unknown type accepted")
	}
}

func TestExcerptCutsOnCharacterBoundary(t *testing.T) {
	tests := []struct {
		in      string
		wantLen int
	}{
		{"short", 5},
		{strings.Repeat("a", 5000), 1024},
		{strings.Repeat("é", 1000), 1024},       // 2-byte runes: 512 fit exactly
		{"a" + strings.Repeat("€", 600), 1024},  // 1 + 3×341 = 1024
		{"ab" + strings.Repeat("€", 600), 1022}, // 2 + 3×340
		{"\xff\xfeok", len("\uFFFDok")},         // a run of bad bytes becomes one U+FFFD
	}
	for _, tt := range tests {
		got := excerpt([]byte(tt.in))
		if len(got) != tt.wantLen || !utf8.ValidString(got) {
			t.Errorf("excerpt of %d bytes: %d bytes (valid %v), want %d", len(tt.in), len(got), utf8.ValidString(got), tt.wantLen)
		}
	}
}

// CONTRACT §26: the body's event carries its sequence, after id, time and type; an event
// written before the release that added it (no sequence) gets the body that release sent.
func TestBodyCarriesSequence(t *testing.T) {
	seven := int64(7)
	ev := models.Event{ID: "0b4c7e1e-6a43-4f57-9d4e-6f0de3f0a8a1", Time: "1763900000", Type: "deal-signed", ObjectType: "deal", Sequence: &seven}
	object := map[string]string{"id": "d1"}
	got, err := Body(ev, object)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"event":{"id":"0b4c7e1e-6a43-4f57-9d4e-6f0de3f0a8a1","time":"1763900000","type":"deal-signed","sequence":7},"deal":{"id":"d1"}}`
	if got != want {
		t.Errorf("body %s\nwant %s", got, want)
	}
	ev.Sequence = nil
	got, err = Body(ev, object)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"event":{"id":"0b4c7e1e-6a43-4f57-9d4e-6f0de3f0a8a1","time":"1763900000","type":"deal-signed"},"deal":{"id":"d1"}}`
	if got != want {
		t.Errorf("body without a sequence %s\nwant %s", got, want)
	}
}

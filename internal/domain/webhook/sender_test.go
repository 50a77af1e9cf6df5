package webhook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// utf16LE is s in UTF-16 little-endian, as a receiver on another platform may answer.
func utf16LE(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
		b.WriteByte(0)
	}
	return b.String()
}

// What a receiver sends back is stored with NUL and invalid UTF-8 replaced, never
// longer than a KiB, and cut on a character boundary (CONTRACT §15).
func TestExcerptIsStorable(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"nul", "Revops API Event Received.\x00", "Revops API Event Received.\uFFFD"},
		{"nul inside", "a\x00b\x00\x00c", "a\uFFFDb\uFFFD\uFFFDc"},
		{"invalid byte", "ok\xff", "ok\uFFFD"},
		{"utf-16", utf16LE("Hi"), "H\uFFFDi\uFFFD"},
		{"bom and utf-16", "\xff\xfe" + utf16LE("A"), "\uFFFDA\uFFFD"},
		{"lone surrogate", "x\xed\xa0\x80y", "x\uFFFDy"},
		{"valid is kept", "Grüße €", "Grüße €"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := excerpt([]byte(tt.in)); got != tt.want {
				t.Fatalf("excerpt(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	// A KiB of NULs: each becomes three bytes, and the cut stays on a character.
	got := excerpt([]byte(strings.Repeat("\x00", 4096)))
	if len(got) != 1023 || !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
		t.Fatalf("excerpt of NULs: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

func TestTransportReasonIsStorable(t *testing.T) {
	got := reason(errors.New("bad \x00 answer \xff"+strings.Repeat("é", 500)), time.Second)
	if !utf8.ValidString(got) || strings.ContainsRune(got, 0) || len(got) > maxReason || !strings.HasPrefix(got, "request failed: bad \uFFFD answer \uFFFD") {
		t.Fatalf("reason %q (%d bytes)", got, len(got))
	}
}

// A receiver answering with NUL or UTF-16 gets a result that can be recorded: the NUL
// case still acknowledges (the sentence is there), the UTF-16 one does not.
func TestSendSanitizesWhatTheReceiverSends(t *testing.T) {
	const ack = "Revops API Event Received."
	tests := []struct {
		name, body, reason, excerpt string
	}{
		{"sentence then nul", ack + "\x00", "", ack + "\uFFFD"},
		{"sentence in utf-16", "\xff\xfe" + utf16LE(ack), "ack sentence missing", "\uFFFD" + strings.Join(strings.Split(ack, ""), "\uFFFD") + "\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			s := &Sender{Client: srv.Client(), AckSentence: ack, Timeout: 5 * time.Second}
			res := s.Send(context.Background(), Message{URL: srv.URL, Method: http.MethodPost, ID: "ev", Body: []byte("{}"), Secrets: []string{"whsec_AAAA"}})
			if res.Reason != tt.reason || res.Excerpt != tt.excerpt || res.StatusCode != 200 {
				t.Fatalf("result %+v, want reason %q excerpt %q", res, tt.reason, tt.excerpt)
			}
		})
	}
}

// The caller's deadline, when earlier than the sender's timeout, bounds the exchange, and
// the reason names the budget the exchange had.
func TestSendKeepsToTheCallersDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	s := &Sender{Client: srv.Client(), AckSentence: "x", Timeout: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res := s.Send(ctx, Message{URL: srv.URL, Method: http.MethodPost, ID: "ev", Body: []byte("{}")})
	if !strings.HasPrefix(res.Reason, "timeout after ") || res.Reason == "timeout after 1m0s" {
		t.Fatalf("reason %q, want a timeout naming the caller's budget", res.Reason)
	}
}

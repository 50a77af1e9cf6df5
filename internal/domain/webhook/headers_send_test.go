package webhook

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const ackSentence = "Revops API Event Received."

// echoServer answers every request with body(r) after the acknowledgement sentence.
func echoServer(t *testing.T, body func(r *http.Request) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, ackSentence+body(r))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func sendWith(t *testing.T, srv *httptest.Server, public bool, headers map[string]string) Result {
	t.Helper()
	s := &Sender{Client: srv.Client(), AckSentence: ackSentence, Timeout: 5 * time.Second, publicPeers: public}
	return s.Send(context.Background(), Message{URL: srv.URL, Method: http.MethodPost, ID: "ev", Body: []byte("{}"),
		Secrets: []string{"whsec_AAAA"}, Headers: headers})
}

// The custom headers go out with the request (names in net/http's canonical form), after
// which Revops' own headers are still its own.
func TestSendCarriesCustomHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := echoServer(t, func(r *http.Request) string { got <- r.Header.Clone(); return "" })
	res := sendWith(t, srv, false, map[string]string{"x-api-key": "k-123", "Authorization": "Bearer tok"})
	if !res.OK() {
		t.Fatalf("send: %+v", res)
	}
	h := <-got
	if h.Get("X-Api-Key") != "k-123" || h.Get("Authorization") != "Bearer tok" || h.Get("User-Agent") != UserAgent {
		t.Fatalf("receiver got headers %v", h)
	}
	if _, canonical := h["X-Api-Key"]; !canonical {
		t.Errorf("header name not sent in canonical form: %v", h)
	}
}

// A receiver that echoes a header's value gets it masked in the excerpt kept: in its
// JSON-quoted forms too, before the excerpt is cut (a value straddling the KiB keeps no
// prefix), and at the end of an answer longer than what is read (its end dropped).
func TestExcerptMasksHeaderValues(t *testing.T) {
	const secret = `s3cr3t-<v>-"q"-0123456789abcdef`
	headers := map[string]string{"X-Api-Key": secret, "X-Short": "zz", "X-B64": "ab/cd+ef=="}
	tests := []struct {
		name string
		body string
	}{
		{"as sent", " got " + secret + " and zz"},
		{"json quoted", ` {"x-api-key":"s3cr3t-\u003cv\u003e-\"q\"-0123456789abcdef"}`},
		{"json quoted without html escapes", ` {"x-api-key":"s3cr3t-<v>-\"q\"-0123456789abcdef"}`},
		{"json quoted with escaped slashes (PHP)", ` {"x-short":"zz","x-api-key":"s3cr3t-<v>-\"q\"-0123456789abcdef","x-b64":"ab\/cd+ef=="}`},
		{"straddling the cut", strings.Repeat(".", maxExcerpt-len(ackSentence)-5) + secret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := echoServer(t, func(*http.Request) string { return tt.body })
			res := sendWith(t, srv, true, headers)
			if !res.OK() || res.Excerpt == "" {
				t.Fatalf("send: %+v", res)
			}
			for _, leak := range []string{"s3cr3", "0123456789abcdef", "zz", "s3c", "cd+ef"} {
				if strings.Contains(res.Excerpt, leak) {
					t.Fatalf("excerpt %q holds %q of a header value", res.Excerpt, leak)
				}
			}
			if len(res.Excerpt) > maxExcerpt {
				t.Fatalf("excerpt of %d bytes", len(res.Excerpt))
			}
		})
	}
	// Values masked shrink the answer: the start of a value cut by the read limit must not
	// move into the excerpt.
	long := strings.Repeat("L0ng-", 819) + "x" // 4096 bytes
	srv := echoServer(t, func(*http.Request) string { return strings.Repeat(long, 16) })
	if res := sendWith(t, srv, true, map[string]string{"X-Long": long}); !res.OK() || strings.Contains(res.Excerpt, "L0ng") {
		t.Fatalf("excerpt %q holds the start of a value cut by the read limit", res.Excerpt)
	}
	// Without headers the excerpt is the answer's start, unmasked.
	srv = echoServer(t, func(*http.Request) string { return " " + secret })
	if res := sendWith(t, srv, true, nil); !strings.Contains(res.Excerpt, secret) {
		t.Fatalf("excerpt without headers %q", res.Excerpt)
	}
	// The masker itself: the end of a long read that may start a value is dropped, and
	// a whole value that the drop would cut is dropped with it.
	m := newMasker(map[string]string{"a": "abcdef", "b": "efQ"})
	for _, read := range []string{"xyz abc", "xyz abcdef", "xyz abcdef e"} {
		if got := m.excerpt(context.Background(), []byte(read), true); !strings.HasPrefix(got, "xyz ") || strings.ContainsAny(strings.ReplaceAll(got, Redacted, ""), "abcdefQ") {
			t.Errorf("truncated read %q kept %q", read, got)
		}
	}
}

// An endpoint with custom headers on a private address (reachable only with
// REVOPS_WEBHOOK_ALLOW_PRIVATE) keeps no excerpt at all; without headers it keeps one.
func TestPrivateDestinationWithHeadersKeepsNoExcerpt(t *testing.T) {
	srv := echoServer(t, func(r *http.Request) string { return " " + r.Header.Get("X-Api-Key") })
	if res := sendWith(t, srv, false, map[string]string{"X-Api-Key": "k-private"}); !res.OK() || res.Excerpt != "" {
		t.Fatalf("loopback answer with headers: %+v, want acknowledged with no excerpt", res)
	}
	if res := sendWith(t, srv, false, nil); res.Excerpt != ackSentence+" " {
		t.Fatalf("loopback answer without headers: excerpt %q", res.Excerpt)
	}
}

// A transport error quoting what the receiver sent (a malformed status line echoing a
// header) is masked before it is kept.
func TestTransportErrorMasksHeaderValues(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	srv := httptest.NewUnstartedServer(nil)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 2" + r.Header.Get("X-Api-Key") + " nope\r\n\r\n")
		_ = buf.Flush()
	})
	srv.StartTLS()
	t.Cleanup(srv.Close)
	res := sendWith(t, srv, true, map[string]string{"X-Api-Key": "leaky-value"})
	if res.Reason == "" || strings.Contains(res.Reason, "leaky") {
		t.Fatalf("reason %q, want a masked transport error", res.Reason)
	}
}

// An answer whose body ends early (the connection closed, or the deadline passed, while
// it was read) may end with the start of an echoed value: that start is dropped as for a
// read cut by the limit, never kept.
func TestExcerptOfABodyCutShortMasksItsEnd(t *testing.T) {
	const secret = "k-0123456789abcdef"
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		echo := ackSentence + " got " + r.Header.Get("X-Api-Key")[:10]
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + echo)
		_ = buf.Flush()
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	res := sendWith(t, srv, true, map[string]string{"X-Api-Key": secret})
	if res.Reason == "" || !strings.Contains(res.Excerpt, " got") {
		t.Fatalf("send: %+v, want a read error and an excerpt", res)
	}
	if strings.Contains(res.Excerpt, "k-0123") {
		t.Fatalf("excerpt %q keeps the start of a header value", res.Excerpt)
	}
}

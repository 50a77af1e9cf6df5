package listener

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/testkit/syncbuf"
)

const body = `{"event":{"id":"7d1c","time":"1700000000","type":"deal-signed"},"deal":{"id":"d-42"}}`

// sentAPIKey is the custom header every send carries, as an endpoint's "headers" would.
const sentAPIKey = "tour-key-123"

// sentTrace is the trace of every webhook send sends, as Revops's traceparent names it.
const sentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

func send(t *testing.T, srv *httptest.Server, method, secret, payload string) (int, string) {
	t.Helper()
	now := time.Now()
	target := srv.URL + "/webhooks"
	var rd io.Reader = strings.NewReader(payload)
	if method == http.MethodGet {
		target += "?payload=" + url.QueryEscape(payload)
		rd = nil
	}
	req, _ := http.NewRequest(method, target, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", "7d1c")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", signing.Header([]string{secret}, "7d1c", now, []byte(payload)))
	req.Header.Set("traceparent", "00-"+sentTrace+"-00f067aa0ba902b7-01")
	req.Header.Set("X-Api-Key", sentAPIKey) // an endpoint's custom header (CONTRACT §25)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestListener(t *testing.T) {
	secret, _ := signing.NewSecret()
	other, _ := signing.NewSecret()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-id") != "7d1c" || !strings.Contains(r.Header.Get("traceparent"), sentTrace) ||
			r.Header.Get("X-Api-Key") != sentAPIKey {
			http.Error(w, "no webhook-id, traceparent or custom header relayed", 400)
			return
		}
		io.WriteString(w, "app says: Revops API Event Received.")
	}))
	defer app.Close()

	for _, tc := range []struct {
		name, method, signWith string
		fail                   bool
		forward                string
		status                 int
		reply, printed         string
	}{
		{"post verified", "POST", secret, false, "", 200, "Revops API Event Received.", "signature ok"},
		{"get verified", "GET", secret, false, "", 200, "Revops API Event Received.", "signature ok"},
		{"wrong secret", "POST", other, false, "", 200, "Revops API Event Received.", "NOT VERIFIED"},
		{"fail mode", "POST", secret, true, "", 500, "refusing", "→ 500"},
		{"forward", "POST", secret, false, app.URL, 200, "app says", "signature ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &syncbuf.Buffer{}
			h := &Handler{Secrets: func() []string { return []string{secret} }, Ack: "Revops API Event Received.",
				Fail: tc.fail, ForwardTo: tc.forward, Client: http.DefaultClient, Out: out}
			srv := httptest.NewTLSServer(h)
			defer srv.Close()
			status, reply := send(t, srv, tc.method, tc.signWith, body)
			if status != tc.status || !strings.Contains(reply, tc.reply) {
				t.Errorf("reply %d %q, want %d %q", status, reply, tc.status, tc.reply)
			}
			if line := out.String(); !strings.Contains(line, tc.printed) || !strings.Contains(line, "deal-signed") || !strings.Contains(line, "d-42") ||
				!strings.Contains(line, "trace "+sentTrace) {
				t.Errorf("printed %q, want %q", line, tc.printed)
			}
		})
	}
}

// Operational events print like the seed's: their type and what they are about — the
// endpoint (delivery-exhausted's too, not its delivery), the meter alert — and a type the
// catalog gains later its object with an id.
func TestListenerShowsOperationalEvents(t *testing.T) {
	secret, _ := signing.NewSecret()
	for _, tc := range []struct{ body, printed string }{
		{`{"event":{"id":"e1","time":"1","type":"endpoint-disabled"},"webhook_endpoint":{"id":"ep-9","host":"h.example","disabled_reason":"failing"}}`,
			"webhook_endpoint ep-9"},
		{`{"event":{"id":"e2","time":"1","type":"endpoint-failing"},"webhook_endpoint":{"id":"ep-9","host":"h.example"}}`,
			"webhook_endpoint ep-9"},
		{`{"event":{"id":"e3","time":"1","type":"delivery-exhausted"},"delivery":{"id":"dl-1"},"suppressed":2,"webhook_endpoint":{"id":"ep-9"}}`,
			"webhook_endpoint ep-9"},
		{`{"event":{"id":"e4","time":"1","type":"meter-threshold-crossed"},"meter_alert":{"alert_id":"al-5","meter":"api_calls"}}`,
			"meter_alert al-5"},
		{`{"event":{"id":"e5","time":"1","type":"widget-made"},"count":3,"widget":{"id":"w-1"}}`,
			"widget w-1"},
	} {
		out := &syncbuf.Buffer{}
		h := &Handler{Secrets: func() []string { return []string{secret} }, Ack: "ok", Out: out}
		srv := httptest.NewTLSServer(h)
		if status, _ := send(t, srv, http.MethodPost, secret, tc.body); status != http.StatusOK {
			t.Errorf("%s: %d", tc.body, status)
		}
		srv.Close()
		if line := out.String(); !strings.Contains(line, tc.printed) || !strings.Contains(line, "signature ok") {
			t.Errorf("printed %q, want %q", line, tc.printed)
		}
	}
}

// Lines stay in columns whatever the type: the longest catalog type
// (meter-threshold-crossed) and an operational event's object (webhook_endpoint <uuid>)
// print their event id and signature check where a deal's do.
func TestListenerColumns(t *testing.T) {
	out := &syncbuf.Buffer{}
	h := &Handler{Out: out, Now: func() time.Time { return time.Unix(0, 0) }}
	const id = "4e797f3c-a9ab-4714-804a-17333f02b6e5"
	for _, rec := range []Received{
		{ID: id, Type: "deal-signed", ObjectKind: "deal", ObjectID: id, Verified: true},
		{ID: id, Type: "meter-threshold-crossed", ObjectKind: "meter_alert", ObjectID: id, Verified: true},
		{ID: id, Type: "delivery-exhausted", ObjectKind: "webhook_endpoint", ObjectID: id, Verified: true},
	} {
		h.print(rec, 200)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range lines[1:] {
		if strings.Index(l, id) != strings.Index(lines[0], id) || strings.Index(l, "signature ok") != strings.Index(lines[0], "signature ok") {
			t.Errorf("columns differ:\n%s\n%s", lines[0], l)
		}
	}
}

// What a body says is printed before its signature is checked, so a body from anyone who
// reaches the receiver must not reach the terminal as control sequences or extra lines.
func TestListenerPrintsNoControlCharacters(t *testing.T) {
	out := &syncbuf.Buffer{}
	h := &Handler{Secrets: func() []string { return nil }, Ack: "ok", Out: out}
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	const evil = `{"event":{"id":"e\u001b]0;owned\u0007","type":"deal-signed\u001b[2J"},` +
		`"deal":{"id":"d\nNOT A LINE\u009b31m"},"x\u001b[31m":{"id":"y"}}`
	send(t, srv, http.MethodPost, "whsec_other", evil)
	line := out.String()
	if strings.ContainsAny(strings.TrimSuffix(line, "\n"), "\x1b\x07\n\u009b") {
		t.Errorf("printed control characters: %q", line)
	}
	if !strings.Contains(line, "deal-signed?[2J") || !strings.Contains(line, "NOT VERIFIED") {
		t.Errorf("printed %q", line)
	}
}

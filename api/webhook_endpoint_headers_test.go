package api_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/testkit/syncbuf"
)

// Every refused header name and value of CONTRACT §25 is a 400 naming headers.<name>
// (invalid_string for what §15 refuses in any header value: control characters), on
// create and on PATCH, and nothing is written; the bounds themselves are accepted.
func TestEndpointHeadersRefused(t *testing.T) {
	h, rc := newReceiving(t)
	url := rc.URL + "/x"
	type tc struct {
		name    string
		headers map[string]any
		code    string
		param   string
	}
	var tests []tc
	for _, name := range []string{
		"webhook-id", "Webhook-Signature", "webhook-anything", "Content-Type", "content-length", "Content-Encoding",
		"Host", "connection", "Keep-Alive", "proxy-authorization", "Proxy-Anything", "TE", "trailer",
		"Transfer-Encoding", "upgrade", "Expect", "accept-encoding", "Range", "forwarded", "X-Forwarded-For",
		"x-forwarded-host", "traceparent", "TraceState", "baggage", "User-Agent",
	} {
		tests = append(tests, tc{"refused " + name, map[string]any{name: "v"}, "parameter_invalid", "headers." + name})
	}
	tooMany := map[string]any{}
	for i := 0; i < 11; i++ {
		tooMany[fmt.Sprintf("X-H%d", i)] = "v"
	}
	tests = append(tests,
		tc{"space in name", map[string]any{"X Api": "v"}, "parameter_invalid", "headers.X Api"},
		tc{"colon in name", map[string]any{"X:Api": "v"}, "parameter_invalid", "headers.X:Api"},
		tc{"empty name", map[string]any{"": "v"}, "parameter_invalid", "headers."},
		tc{"name of 65", map[string]any{strings.Repeat("n", 65): "v"}, "parameter_invalid", "headers." + strings.Repeat("n", 65)},
		tc{"non-ASCII name", map[string]any{"X-Clé": "v"}, "parameter_invalid", "headers.X-Clé"},
		tc{"newline in name", map[string]any{"X-A\n": "v"}, "invalid_string", "headers.X-A\n"},
		tc{"newline in value", map[string]any{"X-A": "a\r\nX-Injected: 1"}, "invalid_string", "headers.X-A"},
		tc{"tab in value", map[string]any{"X-A": "a\tb"}, "invalid_string", "headers.X-A"},
		tc{"DEL in value", map[string]any{"X-A": "a\x7f"}, "invalid_string", "headers.X-A"},
		tc{"C1 in value", map[string]any{"X-A": "a\u0085"}, "invalid_string", "headers.X-A"},
		tc{"NUL in value", map[string]any{"X-A": "a\x00"}, "invalid_string", "headers.X-A"},
		tc{"non-ASCII value", map[string]any{"X-A": "café"}, "parameter_invalid", "headers.X-A"},
		tc{"value of 4097", map[string]any{"X-A": strings.Repeat("v", 4097)}, "parameter_invalid", "headers.X-A"},
		tc{"empty value", map[string]any{"X-A": ""}, "parameter_invalid", "headers.X-A"},
		tc{"leading space", map[string]any{"X-A": " v"}, "parameter_invalid", "headers.X-A"},
		tc{"trailing space", map[string]any{"X-A": "v "}, "parameter_invalid", "headers.X-A"},
		tc{"the placeholder", map[string]any{"X-A": "<redacted>"}, "parameter_invalid", "headers.X-A"},
		tc{"a number", map[string]any{"X-A": 5}, "parameter_invalid", "headers.X-A"},
		tc{"same name in two cases", map[string]any{"X-Key": "a", "x-key": "b"}, "parameter_invalid", "headers.x-key"},
		tc{"11 headers", tooMany, "parameter_invalid", "headers"},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("POST", "/v1/webhook_endpoints", h.key[skSandbox], map[string]any{"url": url, "headers": tt.headers})
			expectError(t, r, http.StatusBadRequest, tt.code)
			if p := r.json(t)["error"].(map[string]any)["param"]; p != tt.param {
				t.Errorf("param %q, want %q (%s)", p, tt.param, r.Body)
			}
		})
	}
	if got := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints", nil)["data"].([]any); len(got) != 0 {
		t.Fatalf("refused bodies wrote endpoints: %v", got)
	}

	// Every fault is listed.
	r := h.do("POST", "/v1/webhook_endpoints", h.key[skSandbox], map[string]any{"url": url, "headers": map[string]any{"Host": "h", "X-A": "é"}})
	if r.Status != 400 || !bytes.Contains(r.Body, []byte(`"headers.Host"`)) || !bytes.Contains(r.Body, []byte(`"headers.X-A"`)) {
		t.Fatalf("two faults: %d %s", r.Status, r.Body)
	}

	// The bounds: 10 headers, a 64-character name, a 4 KiB value, Authorization.
	ok := map[string]any{strings.Repeat("n", 64): strings.Repeat("v", 4096), "Authorization": "Bearer t", "x-!#$%&'*+.^_`|~": "a b"}
	for i := 0; i < 7; i++ {
		ok[fmt.Sprintf("X-H%d", i)] = "v"
	}
	ep := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": url, "headers": ok})
	id := ep["id"].(string)

	// PATCH: the same rules, and the count after the merge.
	patch := func(headers map[string]any) response {
		return h.do("PATCH", "/v1/webhook_endpoints/"+id, h.key[skSandbox], map[string]any{"headers": headers})
	}
	for _, tt := range tests[:3] {
		if r := patch(tt.headers); r.Status != 400 || r.json(t)["error"].(map[string]any)["param"] != tt.param {
			t.Errorf("PATCH %s: %d %s", tt.name, r.Status, r.Body)
		}
	}
	expectError(t, patch(map[string]any{"X-Eleventh": "v"}), http.StatusBadRequest, "parameter_invalid")
	expectError(t, patch(map[string]any{"X-H0": "<redacted>"}), http.StatusBadRequest, "parameter_invalid")
	// A removal and an addition in one PATCH stay at 10.
	if r := patch(map[string]any{"X-H0": nil, "X-Eleventh": "v"}); r.Status != 200 {
		t.Fatalf("remove one, add one: %d %s", r.Status, r.Body)
	}
}

// capturingLogs sends the API's logs, at debug level, to buf.
func capturingLogs(buf io.Writer) harnessOption {
	return func(_ *config.Config, d *api.Deps) {
		d.Log = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

// Header values are secrets (CONTRACT §25): the answer of the write that sets them
// shows them, every other read and every idempotent replay shows "<redacted>"; a PATCH
// merges by case-insensitive name and null removes one; the receiver gets them on a
// test send, whose excerpt (a loopback receiver echoing them) is not kept; no log and no
// idempotency record holds a value. On both databases.
func TestEndpointHeadersAreSecrets(t *testing.T) {
	for _, dbName := range []string{"postgres", "sqlite"} {
		t.Run(dbName, func(t *testing.T) {
			rc := webhooktest.NewReceiver(t)
			logs := &syncbuf.Buffer{}
			h := newHarnessOn(t, dbName, trusting(t, rc), capturingLogs(logs))
			sk := h.key[skSandbox]
			const (
				apiKey  = "key-AAAA-1111-first"
				bearer  = "Bearer tok-BBBB-2222"
				rotated = "key-CCCC-3333-second"
				extra   = "extra-DDDD-4444"
			)
			values := []string{apiKey, bearer, rotated, extra, "AAAA", "BBBB", "CCCC", "DDDD"}
			redacted := "<redacted>"
			headersOf := func(o map[string]any) map[string]any {
				t.Helper()
				hs, ok := o["headers"].(map[string]any)
				if !ok {
					t.Fatalf("no headers object in %v", o)
				}
				return hs
			}
			want := func(what string, got map[string]any, want map[string]string) {
				t.Helper()
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: headers %v, want %v", what, got, want)
				}
			}

			body := map[string]any{"url": rc.URL + "/hooks", "headers": map[string]any{"X-Api-Key": apiKey, "Authorization": bearer}}
			r := h.do("POST", "/v1/webhook_endpoints", sk, body, "Idempotency-Key", "create")
			if r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			ep := r.json(t)
			id := ep["id"].(string)
			want("create", headersOf(ep), map[string]string{"X-Api-Key": apiKey, "Authorization": bearer})
			want("get", headersOf(h.mustObj(200, "GET", "/v1/webhook_endpoints/"+id, nil)), map[string]string{"X-Api-Key": redacted, "Authorization": redacted})
			list := h.mustObj(200, "GET", "/v1/webhook_endpoints", nil)["data"].([]any)
			want("list", headersOf(list[0].(map[string]any)), map[string]string{"X-Api-Key": redacted, "Authorization": redacted})
			replay := h.do("POST", "/v1/webhook_endpoints", sk, body, "Idempotency-Key", "create")
			if replay.Header.Get("Idempotent-Replayed") != "true" || !strings.HasPrefix(replay.json(t)["secret"].(string), "whsec_") {
				t.Fatalf("replay of the create: %d %s", replay.Status, replay.Body)
			}
			want("replay of the create", headersOf(replay.json(t)), map[string]string{"X-Api-Key": redacted, "Authorization": redacted})

			// PATCH: x-api-key replaces X-Api-Key (spelled as now sent), Authorization goes,
			// X-Extra comes; the answer shows the values this PATCH set, and only those.
			patch := map[string]any{"headers": map[string]any{"x-api-key": rotated, "Authorization": nil, "X-Extra": extra}}
			r = h.do("PATCH", "/v1/webhook_endpoints/"+id, sk, patch, "Idempotency-Key", "patch")
			if r.Status != 200 {
				t.Fatalf("patch: %d %s", r.Status, r.Body)
			}
			want("patch", headersOf(r.json(t)), map[string]string{"x-api-key": rotated, "X-Extra": extra})
			r = h.do("PATCH", "/v1/webhook_endpoints/"+id, sk, map[string]any{"description": "d"})
			want("patch of another field", headersOf(r.json(t)), map[string]string{"x-api-key": redacted, "X-Extra": redacted})
			replay = h.do("PATCH", "/v1/webhook_endpoints/"+id, sk, patch, "Idempotency-Key", "patch")
			want("replay of the patch", headersOf(replay.json(t)), map[string]string{"x-api-key": redacted, "X-Extra": redacted})
			// The singular routes keep the headers.
			h.mustObj(200, "PUT", "/v1/webhook_endpoint", map[string]any{"url": rc.URL + "/hooks"})

			// The test send carries them; the loopback receiver's echo is not kept.
			rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, webhooktest.AckSentence+" "+r.Header.Get("X-Api-Key")+" "+r.Header.Get("X-Extra"))
			})
			test := h.mustObj(200, "POST", "/v1/webhook_endpoints/"+id+"/test", map[string]any{"type": "deal-signed"})
			if test["ok"] != true || test["response_excerpt"] != "" {
				t.Fatalf("test send: %v", test)
			}
			got := rc.Received()
			last := got[len(got)-1].Header
			if last.Get("X-Api-Key") != rotated || last.Get("X-Extra") != extra || last.Get("Authorization") != "" {
				t.Fatalf("receiver got %v", last)
			}
			// headers: null removes them all.
			r = h.do("PATCH", "/v1/webhook_endpoints/"+id, sk, map[string]any{"headers": nil})
			want("headers: null", headersOf(r.json(t)), map[string]string{})

			for _, a := range keptAnswers(t, h) {
				for _, v := range values {
					if strings.Contains(a, v) {
						t.Fatalf("the idempotency table holds %q: %s", v, a)
					}
				}
			}
			for _, v := range values {
				if strings.Contains(logs.String(), v) {
					t.Fatalf("the logs hold %q", v)
				}
			}
			if !strings.Contains(logs.String(), "/v1/webhook_endpoints") {
				t.Fatalf("no request logged: the search of the logs proves nothing")
			}
		})
	}
}

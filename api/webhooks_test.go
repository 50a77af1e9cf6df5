package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
)

// trusting makes the API trust rc's certificate (REVOPS_WEBHOOK_CA_FILE) and allow
// private destinations (the receiver listens on loopback), as revops dev does.
func trusting(t *testing.T, rc *webhooktest.Receiver) harnessOption {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return func(c *config.Config, _ *api.Deps) {
		c.WebhookCAFile = ca
		c.WebhookAllowPrivate = true
	}
}

// newReceiving is a harness whose webhooks reach rc, a real HTTPS receiver it trusts.
func newReceiving(t *testing.T) (*harness, *webhooktest.Receiver) {
	rc := webhooktest.NewReceiver(t)
	return newHarness(t, trusting(t, rc)), rc
}

func TestWebhookEndpointBeforeAnyPUT(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/webhook_endpoint"},
		{"GET", "/v1/webhook_endpoint/secret"},
		{"POST", "/v1/webhook_endpoint/rotate_secret"},
	} {
		expectError(t, h.do(tc.method, tc.path, sk, nil), http.StatusNotFound, "resource_missing")
	}
	expectError(t, h.do("POST", "/v1/webhook_endpoint/test", sk, map[string]any{"type": "deal-signed"}), http.StatusNotFound, "resource_missing")
	expectError(t, h.do("GET", "/v1/webhook_endpoint", h.key["public sandbox"], nil), http.StatusForbidden, "secret_key_required")
}

func TestWebhookEndpointValidation(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name  string
		body  any
		code  string
		param string
	}{
		{"url missing", map[string]any{"method": "POST"}, "parameter_missing", "url"},
		{"url empty", map[string]any{"url": ""}, "parameter_missing", "url"},
		{"plain http", map[string]any{"url": "http://example.com/hook"}, "parameter_invalid", "url"},
		{"not a url", map[string]any{"url": "https://"}, "parameter_invalid", "url"},
		{"too long", map[string]any{"url": "https://example.com/" + strings.Repeat("a", 2040)}, "parameter_invalid", "url"},
		{"url not a string", map[string]any{"url": 42}, "parameter_invalid", "url"},
		{"bad method", map[string]any{"url": "https://example.com/", "method": "PUT"}, "parameter_invalid", "method"},
		{"lower-case method", map[string]any{"url": "https://example.com/", "method": "post"}, "parameter_invalid", "method"},
		{"enabled not bool", map[string]any{"url": "https://example.com/", "enabled": "yes"}, "parameter_invalid", "enabled"},
		{"unknown field", map[string]any{"url": "https://example.com/", "urll": "x"}, "unknown_parameter", "urll"},
		{"secret is read-only", map[string]any{"url": "https://example.com/", "secret": "whsec_x"}, "parameter_read_only", "secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("PUT", "/v1/webhook_endpoint", h.key["secret sandbox"], tt.body)
			expectError(t, r, http.StatusBadRequest, tt.code)
			if p, _ := r.json(t)["error"].(map[string]any)["param"].(string); p != tt.param {
				t.Errorf("param %q, want %q", p, tt.param)
			}
		})
	}
	expectError(t, h.do("GET", "/v1/webhook_endpoint", h.key["secret sandbox"], nil), http.StatusNotFound, "resource_missing")
}

func TestWebhookEndpointRefusesPrivateDestinations(t *testing.T) {
	strict := newHarness(t)
	for _, u := range []string{
		"https://127.0.0.1/hook", "https://localhost:8443/hook", "https://10.1.2.3/", "https://192.168.0.10/",
		"https://[::1]/", "https://169.254.169.254/latest/meta-data", "https://100.64.0.1/", "https://[fd00:ec2::254]/",
		"https://0.0.0.0/",
	} {
		r := strict.do("PUT", "/v1/webhook_endpoint", strict.key["secret live"], map[string]any{"url": u})
		expectError(t, r, http.StatusBadRequest, "url_not_allowed")
	}
	expectError(t, strict.do("GET", "/v1/webhook_endpoint", strict.key["secret live"], nil), http.StatusNotFound, "resource_missing")

	// AllowPrivate lets loopback through but never the metadata service.
	dev := newHarness(t, func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true })
	if r := dev.do("PUT", "/v1/webhook_endpoint", dev.key["secret live"], map[string]any{"url": "https://127.0.0.1:9/x"}); r.Status != http.StatusOK {
		t.Fatalf("loopback with allow-private: %d %s", r.Status, r.Body)
	}
	expectError(t, dev.do("PUT", "/v1/webhook_endpoint", dev.key["secret live"], map[string]any{"url": "https://169.254.169.254/"}),
		http.StatusBadRequest, "url_not_allowed")
}

func TestWebhookEndpointLifecycle(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true })
	sk := h.key["secret sandbox"]
	first := h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": "https://127.0.0.1:9443/hooks"})
	if first.Status != http.StatusOK {
		t.Fatalf("first PUT: %d %s", first.Status, first.Body)
	}
	obj := first.json(t)
	secret, _ := obj["secret"].(string)
	if obj["object"] != "webhook_endpoint" || obj["method"] != "POST" || obj["enabled"] != true || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("first PUT answered %s", first.Body)
	}
	second := h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": "https://127.0.0.1:9443/v2", "method": "GET", "enabled": false})
	if o := second.json(t); second.Status != 200 || o["secret"] != nil || o["method"] != "GET" || o["enabled"] != false || o["url"] != "https://127.0.0.1:9443/v2" {
		t.Fatalf("second PUT answered %d %s", second.Status, second.Body)
	}
	got := h.do("GET", "/v1/webhook_endpoint", sk, nil).json(t)
	if got["url"] != "https://127.0.0.1:9443/v2" || got["enabled"] != false || got["secret"] != nil {
		t.Fatalf("GET answered %v", got)
	}
	if s := h.do("GET", "/v1/webhook_endpoint/secret", sk, nil).json(t); s["secret"] != secret || s["previous_secret_expires_at"] != nil {
		t.Fatalf("secret read %v, want the first PUT's secret", s)
	}
	rot := h.do("POST", "/v1/webhook_endpoint/rotate_secret", sk, nil)
	ro := rot.json(t)
	until, _ := time.Parse(time.RFC3339, func() string { s, _ := ro["previous_secret_expires_at"].(string); return s }())
	if rot.Status != 200 || ro["secret"] == secret || !strings.HasPrefix(ro["secret"].(string), "whsec_") ||
		until.Sub(time.Now()) < 23*time.Hour || until.Sub(time.Now()) > 25*time.Hour {
		t.Fatalf("rotate answered %d %s", rot.Status, rot.Body)
	}
	if s := h.do("GET", "/v1/webhook_endpoint/secret", sk, nil).json(t); s["secret"] != ro["secret"] {
		t.Fatalf("secret after rotation %v", s)
	}
	// The live environment has its own (absent) endpoint.
	expectError(t, h.do("GET", "/v1/webhook_endpoint", h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
}

func TestWebhookEndpointManualTest(t *testing.T) {
	h, rc := newReceiving(t)
	sk := h.key["secret sandbox"]
	put := h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": rc.URL + "/hooks", "enabled": false})
	secret, _ := put.json(t)["secret"].(string)

	for i, typ := range []string{"deal-signed", "account-created"} {
		r := h.do("POST", "/v1/webhook_endpoint/test", sk, map[string]any{"type": typ})
		res := r.json(t)
		if r.Status != 200 || res["ok"] != true || res["status_code"] != float64(200) || res["error"] != nil ||
			!strings.Contains(res["response_excerpt"].(string), webhooktest.AckSentence) {
			t.Fatalf("test %s answered %d %s", typ, r.Status, r.Body)
		}
		got := rc.Received()[i]
		var body map[string]json.RawMessage
		if err := json.Unmarshal(got.Body, &body); err != nil {
			t.Fatal(err)
		}
		key := strings.SplitN(typ, "-", 2)[0]
		if string(body["event"]) != `"`+typ+`"` || len(body) != 2 || body[key] == nil || !strings.HasPrefix(string(got.Body), `{"event":`) {
			t.Errorf("test body %s, want {\"event\":%q,%q:{…}}", got.Body, typ, key)
		}
		if got.Header.Get("Content-Type") != "application/json" || !validSignature(secret, got.Header, got.Body) {
			t.Errorf("test request headers %v do not carry a valid signature", got.Header)
		}
	}

	rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "boom")
	})
	res := h.do("POST", "/v1/webhook_endpoint/test", sk, map[string]any{"type": "deal-created"}).json(t)
	if res["ok"] != false || res["status_code"] != float64(500) || res["error"] != "status 500" || res["response_excerpt"] != "boom" {
		t.Fatalf("failed test answered %v", res)
	}
	expectError(t, h.do("POST", "/v1/webhook_endpoint/test", sk, map[string]any{"type": "deal-exploded"}), 400, "parameter_invalid")
	expectError(t, h.do("POST", "/v1/webhook_endpoint/test", sk, map[string]any{}), 400, "parameter_missing")
}

// validSignature checks a Standard Webhooks signature from the specification's text.
func validSignature(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

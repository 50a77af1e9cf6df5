package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
)

// An ed25519 endpoint's page (CONTRACT §25) shows its public key and never its private
// key: not on the page, not after "reveal" (which shows nothing more), not after a
// rotation (which shows the new public key); its test sends carry a v1a signature.
func TestEd25519EndpointPage(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme")
	c := s.client()
	c.mustLogin(u)
	private, public, err := signing.NewEd25519Key()
	if err != nil {
		t.Fatal(err)
	}
	ep, err := webhook.CreateEndpoint(context.Background(), s.store, env,
		models.WebhookEndpoint{URL: rcv.srv.URL + "/hooks", Method: http.MethodPost, Enabled: true, Secret: private},
		time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	tok := c.csrf("/dashboard/webhooks/" + ep.ID)
	// Pages are read unescaped: html/template writes "+" of base64 as "&#43;".
	get := func(path string) string { return html.UnescapeString(c.get(path).body) }
	post := func(path string, form url.Values) (int, string) {
		p := c.post(path, form)
		return p.status, html.UnescapeString(p.body)
	}
	noPrivateKey := func(what, body string, keys ...string) {
		t.Helper()
		for _, k := range keys {
			if strings.Contains(body, k) || strings.Contains(body, strings.TrimPrefix(k, signing.PrivateKeyPrefix)) {
				t.Fatalf("%s shows a private key", what)
			}
		}
	}

	page := get("/dashboard/webhooks/" + ep.ID)
	if !strings.Contains(page, `id="webhook-public-key" class="mono" type="text" value="`+public+`"`) || strings.Contains(page, "reveal-secret") {
		t.Fatalf("the page does not show the public key alone: %.4000s", page)
	}
	noPrivateKey("the page", page, private)
	_, revealed := post("/dashboard/webhooks/"+ep.ID+"/secret/reveal", url.Values{"csrf_token": {tok}})
	noPrivateKey("reveal", revealed, private)

	status, body := post("/dashboard/webhooks/"+ep.ID+"/secret/rotate", url.Values{"csrf_token": {tok}})
	rotated := s.endpoints(env)[0]
	newPublic, err := signing.PublicKey(rotated.Secret)
	if err != nil || status != http.StatusOK || !strings.Contains(body, newPublic) || !strings.Contains(body, "New key pair made") {
		t.Fatalf("rotate: %d (%v) %.3000s", status, err, body)
	}
	noPrivateKey("the rotation", body, private, rotated.Secret)

	before := rcv.count()
	status, body = post("/dashboard/webhooks/"+ep.ID+"/test", url.Values{"csrf_token": {tok}, "type": {"account-created"}})
	if status != http.StatusOK || !strings.Contains(body, "PASS") || rcv.count() != before+1 {
		t.Fatalf("test send: %d %.2000s", status, body)
	}
	rcv.mu.Lock()
	sigs := rcv.got[len(rcv.got)-1].Get("webhook-signature")
	rcv.mu.Unlock()
	if entries := strings.Fields(sigs); len(entries) != 2 || !strings.HasPrefix(entries[0], "v1a,") || !strings.HasPrefix(entries[1], "v1a,") {
		t.Fatalf("test send signed %q: want v1a under the new key and the old one", sigs)
	}
}

package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// Issue 41 finding 8 (CONTRACT §11, §13): an endpoint saved with credentials in its URL
// before they were refused shows a warning on the Webhooks page and on its own page,
// saying to move them into a header; its form saves with the URL unchanged, refuses
// other credentials, and once the URL is clean the warning is gone.
func TestEndpointURLCredentialsWarning(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme")
	saved := strings.Replace(rcv.srv.URL, "https://", "https://ops:hunter2@", 1) + "/hooks"
	ep, err := webhook.CreateEndpoint(context.Background(), s.store, env, models.WebhookEndpoint{URL: saved,
		Method: http.MethodPost, Enabled: true, Secret: "whsec_" + strings.Repeat("A", 43), RetryPolicy: models.DefaultRetryPolicy},
		time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	c := s.client()
	c.mustLogin(u)
	const banner = `class="warning-banner" role="note" data-warning="url_credentials"`
	for _, path := range []string{"/dashboard/webhooks", "/dashboard/webhooks/" + ep.ID} {
		p := c.get(path)
		if !strings.Contains(p.body, banner) || !strings.Contains(html.UnescapeString(p.body), "custom header") {
			t.Errorf("%s shows no credentials warning: %.3000s", path, p.body)
		}
	}
	tok := c.csrf("/dashboard/webhooks/" + ep.ID)
	if p := c.post("/dashboard/webhooks/"+ep.ID, endpointForm(tok, "url", saved, "description", "Billing")); p.status != http.StatusSeeOther {
		t.Fatalf("saving with the URL unchanged: %d %.1500s", p.status, p.body)
	}
	other := strings.Replace(saved, "hunter2", "hunter3", 1)
	p := c.post("/dashboard/webhooks/"+ep.ID, endpointForm(tok, "url", other))
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="url-error"`) || !strings.Contains(p.body, "must not carry credentials") {
		t.Fatalf("other credentials: %d, want 400 under the URL: %.3000s", p.status, p.body)
	}
	if got := s.endpoints(env)[0]; got.URL != saved || got.Description != "Billing" {
		t.Fatalf("endpoint now %q %q", got.URL, got.Description)
	}
	form := endpointForm(tok, "url", rcv.srv.URL+"/hooks")
	form["header_name"], form["header_value"] = []string{"Authorization"}, []string{"Basic b3BzOmh1bnRlcjI="}
	if p := c.post("/dashboard/webhooks/"+ep.ID, form); p.status != http.StatusSeeOther {
		t.Fatalf("moving the credentials into a header: %d %.1500s", p.status, p.body)
	}
	if p := c.get("/dashboard/webhooks"); strings.Contains(p.body, "warning-banner") {
		t.Error("the warning stays once the URL is clean")
	}
}

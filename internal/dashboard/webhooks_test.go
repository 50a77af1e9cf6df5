package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var secretField = regexp.MustCompile(`id="webhook-secret" class="mono" type="text" value="([^"]+)"`)

func TestWebhookSettingsValidation(t *testing.T) {
	s := newSite(t) // private destinations refused, as in production
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/webhooks")
	for _, tc := range []struct {
		name, url, method, wantMsg string
	}{
		{"empty url", "", "POST", "url is required."},
		{"plain http", "http://example.com/hook", "POST", "beginning with https://"},
		{"bad method", "https://example.com/hook", "PUT", "method must be POST or GET."},
		{"loopback", "https://127.0.0.1/hook", "POST", "loopback, private, link-local or metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := c.post("/dashboard/webhooks", url.Values{"csrf_token": {tok}, "url": {tc.url}, "method": {tc.method}, "enabled": {"on"}})
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, `class="field-error"`) || !strings.Contains(p.body, tc.wantMsg) {
				t.Fatalf("%d, want 400 with the inline message %q: %.2000s", p.status, tc.wantMsg, p.body)
			}
			if !strings.Contains(p.body, `value="`+tc.url+`"`) {
				t.Error("the typed URL is not kept in the form")
			}
		})
	}
	env, _ := s.store.Environment(context.Background(), u.orgID, "sandbox")
	if _, err := s.store.WebhookEndpoint(context.Background(), env); err == nil {
		t.Fatal("an invalid form saved an endpoint")
	}
	// Nothing to test or reveal before the first save.
	if p := c.post("/dashboard/webhooks/test", url.Values{"csrf_token": {tok}, "type": {"deal-signed"}}); p.status != http.StatusBadRequest {
		t.Fatalf("test before save: %d", p.status)
	}
	if p := c.post("/dashboard/webhooks/secret/reveal", url.Values{"csrf_token": {tok}}); p.status != http.StatusNotFound {
		t.Fatalf("reveal before save: %d", p.status)
	}
}

func TestWebhookSettingsSaveRevealRotateTest(t *testing.T) {
	rcv := newReceiver(t, http.StatusOK, "Revops API Event Received.")
	s := newSite(t, rcv.siteArgs()...)
	u := s.newUser("Acme", "owner@acme.test")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/webhooks")

	p := c.post("/dashboard/webhooks", url.Values{"csrf_token": {tok}, "url": {rcv.srv.URL + "/hook"}, "method": {"GET"}})
	if p.status != http.StatusOK || !strings.Contains(p.body, "signing secret was made") {
		t.Fatalf("save: %d %.500s", p.status, p.body)
	}
	env, _ := s.store.Environment(context.Background(), u.orgID, "sandbox")
	ep, err := s.store.WebhookEndpoint(context.Background(), env)
	if err != nil || ep.Method != "GET" || ep.Enabled || ep.URL != rcv.srv.URL+"/hook" {
		t.Fatalf("saved %+v %v: want GET, disabled (box unticked)", ep, err)
	}
	if strings.Contains(c.get("/dashboard/webhooks").body, ep.Secret) {
		t.Fatal("the secret is shown without asking")
	}
	m := secretField.FindStringSubmatch(c.post("/dashboard/webhooks/secret/reveal", url.Values{"csrf_token": {tok}}).body)
	if m == nil || html.UnescapeString(m[1]) != ep.Secret {
		t.Fatal("reveal does not show the secret")
	}
	p = c.post("/dashboard/webhooks/secret/rotate", url.Values{"csrf_token": {tok}})
	m = secretField.FindStringSubmatch(p.body)
	if m == nil || html.UnescapeString(m[1]) == ep.Secret || !strings.Contains(p.body, "previous one still signs") {
		t.Fatalf("rotate: %d %.500s", p.status, p.body)
	}

	for _, tc := range []struct {
		name         string
		status       int
		body         string
		want, reason string
	}{
		{"acknowledged", http.StatusOK, "ok: Revops API Event Received.", "PASS", ""},
		{"no sentence", http.StatusOK, "thanks", "FAIL", "not acknowledged"},
		{"server error", http.StatusInternalServerError, "boom", "FAIL", "500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv.set(tc.status, tc.body)
			before := rcv.count()
			p := c.post("/dashboard/webhooks/test", url.Values{"csrf_token": {tok}, "type": {"account-created"}})
			if p.status != http.StatusOK || !strings.Contains(p.body, tc.want) || !strings.Contains(p.body, tc.reason) {
				t.Fatalf("%d, want %s: %.3000s", p.status, tc.want, p.body)
			}
			if rcv.count() != before+1 {
				t.Fatalf("receiver got %d requests, want 1", rcv.count()-before)
			}
		})
	}
	if p := c.post("/dashboard/webhooks/test", url.Values{"csrf_token": {tok}, "type": {"deal-exploded"}}); p.status != http.StatusBadRequest {
		t.Fatalf("unknown type: %d", p.status)
	}
}

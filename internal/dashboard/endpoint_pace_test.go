package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestWebhookEndpointPace (CONTRACT §27): the form sets, shows and clears an endpoint's
// pace; the list shows it; a pace past the environment's cap is refused beside the field
// and saves nothing; a test send says it is not paced.
func TestWebhookEndpointPace(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/webhooks/new")

	p := c.post("/dashboard/webhooks", endpointForm(tok, "url", rcv.srv.URL+"/paced", "rate_limit", "90", "rate_period", "1m"))
	eps := s.endpoints(env)
	if p.status != http.StatusSeeOther || len(eps) != 1 || eps[0].RateLimit != 90 || eps[0].RatePeriod != "1m" {
		t.Fatalf("add: %d, %+v: %.500s", p.status, eps, p.body)
	}
	id := eps[0].ID
	page := c.get("/dashboard/webhooks/" + id).body
	if !strings.Contains(page, `id="endpoint-rate-limit" value="90"`) || !strings.Contains(page, `<option value="1m" selected>`) {
		t.Fatalf("edit page misses the pace: %.6000s", page)
	}
	if list := c.get("/dashboard/webhooks").body; !strings.Contains(list, "at most 90/1m") {
		t.Fatalf("list misses the pace: %.4000s", list)
	}

	// A test send is not paced, and says so.
	p = c.post("/dashboard/webhooks/"+id+"/test", url.Values{"csrf_token": {tok}, "type": {"account-created"}})
	if p.status != http.StatusOK || !strings.Contains(p.body, "not paced: a test send goes at once") || !strings.Contains(p.body, "(90/1m)") {
		t.Fatalf("test send: %d %.3000s", p.status, p.body)
	}

	p = c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", rcv.srv.URL+"/paced", "rate_limit", "500", "rate_period", "1s"))
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "REVOPS_PACED_RATE_PER_ENVIRONMENT") {
		t.Fatalf("past the cap: %d %.3000s", p.status, p.body)
	}
	if ep := s.endpoints(env)[0]; ep.RateLimit != 90 {
		t.Fatalf("a refused pace was saved: %d/%s", ep.RateLimit, ep.RatePeriod)
	}
	p = c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", rcv.srv.URL+"/paced", "rate_limit", "five"))
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "rate_limit.limit must be a whole number") {
		t.Fatalf("a limit that is not a number: %d %.3000s", p.status, p.body)
	}

	f := endpointForm(tok, "url", rcv.srv.URL+"/paced")
	f.Set("rate_limit", "")
	if p = c.post("/dashboard/webhooks/"+id, f); p.status != http.StatusSeeOther {
		t.Fatalf("unpace: %d %.500s", p.status, p.body)
	}
	if ep := s.endpoints(env)[0]; ep.RateLimit != 0 || ep.RatePeriod != "" {
		t.Fatalf("still paced: %d/%s", ep.RateLimit, ep.RatePeriod)
	}
	if list := c.get("/dashboard/webhooks").body; !strings.Contains(list, `<dd class="pace">unpaced</dd>`) {
		t.Fatalf("list misses unpaced: %.4000s", list)
	}
}

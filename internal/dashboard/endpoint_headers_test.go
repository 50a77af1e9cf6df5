package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The endpoint form sets custom headers (CONTRACT §25) in name/value rows: the edit page
// shows a saved header's name with its value redacted, an empty value keeps it, a
// cleared name removes it, a refused name shows under the headers; the test send
// carries them.
func TestEndpointFormHeaders(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/webhooks/new")
	const secret = "dash-key-7777-secret"

	if page := c.get("/dashboard/webhooks/new").body; !strings.Contains(page, `name="header_name" id="header-name-1"`) {
		t.Fatalf("the add form has no header rows: %.3000s", page)
	}
	form := endpointForm(tok, "url", rcv.srv.URL+"/hooks")
	form["header_name"], form["header_value"] = []string{"X-Api-Key", "X-Team", ""}, []string{secret, "billing", ""}
	p := c.post("/dashboard/webhooks", form)
	eps := s.endpoints(env)
	if p.status != http.StatusSeeOther || len(eps) != 1 || eps[0].Headers["X-Api-Key"] != secret || eps[0].Headers["X-Team"] != "billing" {
		t.Fatalf("add: %d, endpoints %+v: %.500s", p.status, eps, p.body)
	}
	id := eps[0].ID
	page := c.get("/dashboard/webhooks/" + id).body
	for what, bad := range map[string]bool{"name shown": !strings.Contains(page, `value="X-Api-Key"`),
		"value redacted": !strings.Contains(page, `placeholder="<redacted>"`), "secret hidden": strings.Contains(page, secret),
		"plain value hidden": strings.Contains(page, `"billing"`)} {
		if bad {
			t.Errorf("edit page: %s fails", what)
		}
	}

	// Keep X-Api-Key (empty value), drop X-Team (name cleared), add X-New.
	form = endpointForm(tok, "url", rcv.srv.URL+"/hooks")
	form["header_name"], form["header_value"] = []string{"X-Api-Key", "", "X-New"}, []string{"", "", "n1"}
	if p := c.post("/dashboard/webhooks/"+id, form); p.status != http.StatusSeeOther {
		t.Fatalf("edit: %d %.500s", p.status, p.body)
	}
	if h := s.endpoints(env)[0].Headers; len(h) != 2 || h["X-Api-Key"] != secret || h["X-New"] != "n1" {
		t.Fatalf("after edit: headers %v", h)
	}

	// A refused name: shown under the headers, nothing saved, no value shown again.
	form["header_name"], form["header_value"] = []string{"X-Api-Key", "Host", "X-New"}, []string{"other-value", "h", ""}
	p = c.post("/dashboard/webhooks/"+id, form)
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="headers-error"`) || strings.Contains(p.body, "other-value") {
		t.Fatalf("refused name: %d %.3000s", p.status, p.body)
	}
	if h := s.endpoints(env)[0].Headers; h["X-Api-Key"] != secret {
		t.Fatalf("a refused form changed the headers: %v", h)
	}

	before := rcv.count()
	if p := c.post("/dashboard/webhooks/"+id+"/test", url.Values{"csrf_token": {tok}, "type": {"deal-signed"}}); p.status != http.StatusOK || strings.Contains(p.body, secret) {
		t.Fatalf("test send: %d", p.status)
	}
	rcv.mu.Lock()
	got := rcv.got[before:]
	rcv.mu.Unlock()
	if len(got) != 1 || got[0].Get("X-Api-Key") != secret || got[0].Get("X-New") != "n1" {
		t.Fatalf("the test send carried %v", got)
	}
}

// A form shown again — after "Test filter", or refused for another field — never
// carries the header values typed (they are secrets), so it says so on each row that had
// one: otherwise the next save keeps the old value of a saved header without a word,
// and the new value typed is lost.
func TestEndpointFormAsksToRetypeHeaderValues(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/webhooks/new")
	form := endpointForm(tok, "url", rcv.srv.URL+"/hooks")
	form["header_name"], form["header_value"] = []string{"X-Api-Key"}, []string{"old-value-1111"}
	if p := c.post("/dashboard/webhooks", form); p.status != http.StatusSeeOther {
		t.Fatalf("add: %d %.500s", p.status, p.body)
	}
	id := s.endpoints(env)[0].ID

	const typed = "new-value-2222"
	for _, step := range []struct {
		name   string
		fields []string
	}{
		{"test filter", []string{"intent", "test_filter", "filter_type", "deal-signed"}},
		{"refused url", []string{"url", "not a url"}},
	} {
		form := endpointForm(tok, append([]string{"url", rcv.srv.URL + "/hooks"}, step.fields...)...)
		form["header_name"], form["header_value"] = []string{"X-Api-Key", "X-Other", ""}, []string{typed, "", ""}
		p := c.post("/dashboard/webhooks/"+id, form)
		if strings.Contains(p.body, typed) {
			t.Fatalf("%s: the page shows a header value", step.name)
		}
		if !strings.Contains(p.body, `id="header-value-0-retype"`) || strings.Contains(p.body, `id="header-value-1-retype"`) {
			t.Errorf("%s: the row whose value was typed does not ask for it again (or another row does): %d %.4000s", step.name, p.status, p.body)
		}
	}
	if h := s.endpoints(env)[0].Headers; h["X-Api-Key"] != "old-value-1111" {
		t.Fatalf("nothing was saved, yet the headers are %v", h)
	}
}

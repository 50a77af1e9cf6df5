package dashboard_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/revops/revops/internal/testkit/testdb"
)

// The endpoint form chooses the endpoint's ordering (CONTRACT §26) on both databases,
// by the API's rules: "none" first and chosen on a new endpoint; "object" saved and shown
// selected; a form without the field keeps it; a value that is neither is a field error
// that saves nothing.
func TestEndpointFormOrdering(t *testing.T) {
	lite := testdb.Open(t, filepath.Join(t.TempDir(), "revops.db"))
	for name, s := range map[string]*site{"postgres": newSite(t, "--webhook-allow-private"),
		"sqlite": newSiteOn(t, lite, "--webhook-allow-private")} {
		t.Run(name, func(t *testing.T) {
			u := s.newUser("Acme", "owner@acme.test")
			c := s.client()
			c.mustLogin(u)
			env := s.sandbox(u.orgID)
			tok := c.csrf("/dashboard/webhooks/new")
			if add := c.get("/dashboard/webhooks/new").body; !strings.Contains(add, `<option value="none" selected>`) || !strings.Contains(add, `<option value="object">`) {
				t.Fatalf("the add form has no ordering choice with none chosen: %.6000s", add)
			}
			p := c.post("/dashboard/webhooks", endpointForm(tok, "url", "https://127.0.0.1/hooks", "ordering", "object"))
			eps := s.endpoints(env)
			if p.status != http.StatusSeeOther || len(eps) != 1 || eps[0].Ordering != "object" {
				t.Fatalf("add ordered: %d, %d endpoints %+v: %.3000s", p.status, len(eps), eps, p.body)
			}
			id := eps[0].ID
			if page := c.get(p.location).body; !strings.Contains(page, `<option value="object" selected>`) {
				t.Fatalf("the created page does not show its ordering: %.6000s", page)
			}
			if list := c.get("/dashboard/webhooks").body; !strings.Contains(list, `<dd class="ordering">per object`) {
				t.Fatalf("the Webhooks page does not show the ordering: %.6000s", list)
			}
			if p := c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", "https://127.0.0.1/hooks", "description", "CRM")); p.status != http.StatusSeeOther || s.endpoints(env)[0].Ordering != "object" {
				t.Fatalf("a form without ordering: %d, ordering %q", p.status, s.endpoints(env)[0].Ordering)
			}
			for _, bad := range []string{"fifo", "object\x01"} {
				p = c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", "https://127.0.0.1/hooks", "ordering", bad, "description", "changed"))
				if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="ordering-error"`) {
					t.Fatalf("ordering %q: %d %.6000s", bad, p.status, p.body)
				}
				if ep := s.endpoints(env)[0]; ep.Ordering != "object" || ep.Description != "CRM" {
					t.Fatalf("a refused ordering saved %+v", ep)
				}
			}
			if p := c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", "https://127.0.0.1/hooks", "ordering", "none")); p.status != http.StatusSeeOther || s.endpoints(env)[0].Ordering != "none" {
				t.Fatalf("ordering switched off: %d, ordering %q", p.status, s.endpoints(env)[0].Ordering)
			}
		})
	}
}

package dashboard_test

import (
	"html"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/testkit/testdb"
)

// The endpoint form chooses the signing scheme (CONTRACT §25) on both databases: an
// ed25519 endpoint made from the form shows its public key; switching the scheme on edit
// makes a key of the other scheme while the old one keeps signing for 24 hours, as the
// API's PATCH does; a scheme that is not one of the two is a field error; and no page
// ever carries a private key.
func TestEndpointFormSigningScheme(t *testing.T) {
	lite := testdb.Open(t, filepath.Join(t.TempDir(), "revops.db"))
	// Private destinations allowed: the form is saved without resolving a real host.
	for name, s := range map[string]*site{"postgres": newSite(t, "--webhook-allow-private"),
		"sqlite": newSiteOn(t, lite, "--webhook-allow-private")} {
		t.Run(name, func(t *testing.T) {
			u := s.newUser("Acme", "owner@acme.test")
			c := s.client()
			c.mustLogin(u)
			env := s.sandbox(u.orgID)
			// Pages are read unescaped: html/template writes "+" of base64 as "&#43;".
			seen := func(what string, p page) string {
				t.Helper()
				body := html.UnescapeString(p.body)
				if strings.Contains(p.body, signing.PrivateKeyPrefix) || strings.Contains(body, signing.PrivateKeyPrefix) {
					t.Fatalf("%s shows a private key", what)
				}
				for _, ep := range s.endpoints(env) {
					for _, k := range []string{ep.Secret, ep.PreviousSecret} {
						if rest, ok := strings.CutPrefix(k, signing.PrivateKeyPrefix); ok && strings.Contains(body, rest) {
							t.Fatalf("%s shows a private key's seed", what)
						}
					}
				}
				return body
			}
			tok := c.csrf("/dashboard/webhooks/new")
			add := seen("the add form", c.get("/dashboard/webhooks/new"))
			if !strings.Contains(add, `<option value="hmac-sha256" selected>`) || !strings.Contains(add, `<option value="ed25519">`) {
				t.Fatalf("the add form has no signing choice with HMAC-SHA256 first: %.6000s", add)
			}

			p := c.post("/dashboard/webhooks", endpointForm(tok, "url", "https://127.0.0.1/hooks", "signing", "ed25519"))
			eps := s.endpoints(env)
			if p.status != http.StatusSeeOther || len(eps) != 1 || signing.Scheme(eps[0].Secret) != signing.SchemeEd25519 {
				t.Fatalf("add ed25519: %d, %d endpoints: %.3000s", p.status, len(eps), p.body)
			}
			id, first := eps[0].ID, eps[0].Secret
			public, err := signing.PublicKey(first)
			if err != nil {
				t.Fatal(err)
			}
			page := seen("the created page", c.get(p.location))
			if !strings.Contains(page, public) || strings.Contains(page, "reveal-secret") || !strings.Contains(page, "key pair") ||
				!strings.Contains(page, `<option value="ed25519" selected>`) || !strings.Contains(page, "keeps signing for 24 hours") {
				t.Fatalf("the created page: %.6000s", page)
			}

			// To HMAC: a new whsec_ secret, the ed25519 key signing for 24 hours more.
			p = c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", "https://127.0.0.1/hooks", "signing", "hmac-sha256"))
			ep := s.endpoints(env)[0]
			if p.status != http.StatusSeeOther || signing.Scheme(ep.Secret) != signing.SchemeHMAC || ep.PreviousSecret != first || ep.PreviousUntil == nil {
				t.Fatalf("switch to hmac: %d, scheme %s, previous kept %v, until %v: %.3000s",
					p.status, signing.Scheme(ep.Secret), ep.PreviousSecret == first, ep.PreviousUntil, p.body)
			}
			page = seen("the page after the switch to hmac", c.get(p.location))
			if !strings.Contains(page, "reveal-secret") || strings.Contains(page, public) || !strings.Contains(page, "previous key also signs until") ||
				!strings.Contains(page, "A key of the new signing scheme was made") {
				t.Fatalf("the page after the switch to hmac: %.6000s", page)
			}
			if page := seen("reveal", c.post("/dashboard/webhooks/"+id+"/secret/reveal", endpointForm(tok))); !strings.Contains(page, ep.Secret) {
				t.Fatalf("reveal after the switch does not show the new secret")
			}
			hmacSecret := ep.Secret

			// Saving the same scheme again makes no new key.
			if p := c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", "https://127.0.0.1/hooks", "signing", "hmac-sha256")); p.status != http.StatusSeeOther || s.endpoints(env)[0].Secret != hmacSecret {
				t.Fatalf("saving the same scheme: %d, key changed %v", p.status, s.endpoints(env)[0].Secret != hmacSecret)
			}

			// A refused scheme, by the rules or by the input check: a field error, nothing saved.
			for _, bad := range []string{"rsa", "ed25519\x01"} {
				p = c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", "https://127.0.0.1/hooks", "signing", bad))
				if body := seen("a refused scheme", p); p.status != http.StatusBadRequest || !strings.Contains(body, `id="signing-error"`) {
					t.Fatalf("signing %q: %d %.6000s", bad, p.status, body)
				}
				if s.endpoints(env)[0].Secret != hmacSecret {
					t.Fatalf("a refused scheme changed the key")
				}
			}

			// Back to ed25519: a new key pair, the HMAC secret signing for 24 hours more.
			p = c.post("/dashboard/webhooks/"+id, endpointForm(tok, "url", "https://127.0.0.1/hooks", "signing", "ed25519"))
			ep = s.endpoints(env)[0]
			if p.status != http.StatusSeeOther || signing.Scheme(ep.Secret) != signing.SchemeEd25519 || ep.Secret == first ||
				ep.PreviousSecret != hmacSecret || ep.PreviousUntil == nil {
				t.Fatalf("switch back to ed25519: %d, scheme %s: %.3000s", p.status, signing.Scheme(ep.Secret), p.body)
			}
			newPublic, err := signing.PublicKey(ep.Secret)
			if err != nil {
				t.Fatal(err)
			}
			if page := seen("the page after the switch back", c.get(p.location)); !strings.Contains(page, newPublic) || !strings.Contains(page, "previous key also signs until") {
				t.Fatalf("the page after the switch back: %.6000s", page)
			}
		})
	}
}

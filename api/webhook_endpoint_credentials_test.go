package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/models"
)

// allowPrivate lets endpoints point at loopback addresses that nothing needs to resolve.
func allowPrivate(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true }

// Issue 41 finding 8 (CONTRACT §13, §25): a new or changed endpoint URL with user
// information is refused, on every route that sets one (400 on url, pointing to custom
// headers); an endpoint saved with one before the rule keeps it — reads show the URL as
// saved, with a warning to move the credentials into a header — and may be edited
// without retyping it. Both databases.
func TestEndpointURLCredentials(t *testing.T) {
	const saved = "https://ops:hunter2@127.0.0.1:9/hooks?token=abc"
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db, allowPrivate)
			refused := func(what string, r response) {
				t.Helper()
				expectError(t, r, http.StatusBadRequest, "parameter_invalid")
				e := r.json(t)["error"].(map[string]any)
				if e["param"] != "url" || !strings.Contains(e["message"].(string), "custom header") {
					t.Errorf("%s: %v, want param url and a message pointing to custom headers", what, e)
				}
				if strings.Contains(string(r.Body), "hunter2") {
					t.Errorf("%s: the refusal repeats the password: %s", what, r.Body)
				}
			}
			sk := h.key[skSandbox]
			for _, u := range []string{saved, "https://apikey@127.0.0.1:9/hooks", "https://:@127.0.0.1:9/hooks"} {
				refused("POST "+u, h.do("POST", "/v1/webhook_endpoints", sk, map[string]any{"url": u}))
				refused("PUT "+u, h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": u}))
			}

			// An endpoint saved before the rule (written past the API's validation).
			ctx := context.Background()
			env, err := h.store.Environment(ctx, h.orgID, models.EnvSandbox)
			if err != nil {
				t.Fatal(err)
			}
			old, err := webhook.CreateEndpoint(ctx, h.store, env, models.WebhookEndpoint{URL: saved, Method: http.MethodPost,
				Enabled: true, Secret: "whsec_" + strings.Repeat("A", 43), RetryPolicy: models.DefaultRetryPolicy},
				time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
			if err != nil {
				t.Fatal(err)
			}
			path := "/v1/webhook_endpoints/" + old.ID
			warned := func(what string, o map[string]any, want bool) {
				t.Helper()
				ws, ok := o["warnings"].([]any)
				if !ok {
					t.Fatalf("%s: warnings %v, want a list", what, o["warnings"])
				}
				got := len(ws) == 1 && ws[0].(map[string]any)["code"] == webhook.CodeURLCredentials &&
					strings.Contains(ws[0].(map[string]any)["message"].(string), "custom header")
				if got != want || (!want && len(ws) != 0) {
					t.Errorf("%s: warnings %v, want the url_credentials warning: %v", what, ws, want)
				}
			}
			got := h.mustObj(http.StatusOK, "GET", path, nil)
			if got["url"] != saved {
				t.Errorf("GET shows url %v, want it as saved", got["url"])
			}
			warned("GET", got, true)
			warned("list", h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints", nil)["data"].([]any)[0].(map[string]any), true)
			warned("PATCH of another field", h.mustObj(http.StatusOK, "PATCH", path, map[string]any{"description": "billing"}), true)
			warned("PATCH sending the URL back", h.mustObj(http.StatusOK, "PATCH", path, map[string]any{"url": saved}), true)
			h.mustObj(http.StatusOK, "PUT", "/v1/webhook_endpoint", map[string]any{"url": saved}) // the oldest's, unchanged
			refused("PATCH to other credentials", h.do("PATCH", path, sk, map[string]any{"url": strings.Replace(saved, "hunter2", "hunter3", 1)}))
			refused("PATCH adding credentials to the host", h.do("PATCH", path, sk, map[string]any{"url": "https://ops:hunter2@127.0.0.2:9/hooks"}))
			refused("PUT to other credentials", h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": "https://x:y@127.0.0.1:9/hooks"}))
			if got := h.mustObj(http.StatusOK, "GET", path, nil); got["url"] != saved {
				t.Errorf("a refused change changed url to %v", got["url"])
			}
			moved := h.mustObj(http.StatusOK, "PATCH", path, map[string]any{"url": "https://127.0.0.1:9/hooks?token=abc",
				"headers": map[string]any{"Authorization": "Basic b3BzOmh1bnRlcjI="}})
			warned("PATCH moving the credentials into a header", moved, false)
			created := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": "https://127.0.0.1:9/clean"})
			warned("a new endpoint", created, false)
		})
	}
}

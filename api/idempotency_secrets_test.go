package api_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
)

// keptAnswers reads every answer the idempotency table holds, straight from the database.
func keptAnswers(t *testing.T, h *harness) []string {
	t.Helper()
	db := rawDB(t, h)
	var out []string
	if err := db.Raw("SELECT COALESCE(response, '') FROM idempotency_keys").Scan(&out).Error; err != nil {
		t.Fatal(err)
	}
	return out
}

// Secrets at rest (CONTRACT §17): the idempotency table never holds a signing secret,
// whatever answer it keeps — an endpoint's create, its rotations by the plural and the
// singular routes, a PATCH — and a replay shows the endpoint's current secret, the rest
// of the first answer unchanged; once the endpoint is deleted, its replays show none.
// (The singular PUT, idempotent by itself, is not one of §14's methods: it keeps nothing.)
func TestIdempotentAnswersKeepNoSecret(t *testing.T) {
	for _, dbName := range []string{"postgres", "sqlite"} {
		t.Run(dbName, func(t *testing.T) {
			h := newHarnessOn(t, dbName, func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true })
			sk := h.key[skSandbox]
			send := func(method, path, key string, body any, status int) map[string]any {
				t.Helper()
				r := h.do(method, path, sk, body, "Idempotency-Key", key)
				if r.Status != status {
					t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
				}
				return r.json(t)
			}
			replay := func(method, path, key string, body any, status int, first map[string]any) string {
				t.Helper()
				r := h.do(method, path, sk, body, "Idempotency-Key", key)
				again := r.json(t)
				if r.Status != status || r.Header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("replay of %s %s: %d %s", method, path, r.Status, r.Body)
				}
				secret, _ := again["secret"].(string)
				delete(again, "secret")
				want := map[string]any{}
				for k, v := range first {
					want[k] = v
				}
				delete(want, "secret")
				if !reflect.DeepEqual(again, want) {
					t.Fatalf("replay of %s %s = %s, want the first answer %v", method, path, r.Body, first)
				}
				return secret
			}
			current := func(path string) string {
				t.Helper()
				return h.mustObj(http.StatusOK, "GET", path, nil)["secret"].(string)
			}

			put := send("PUT", "/v1/webhook_endpoint", "put", map[string]any{"url": "https://127.0.0.1:9443/a"}, http.StatusOK)
			created := send("POST", "/v1/webhook_endpoints", "create", map[string]any{"url": "https://127.0.0.1:9443/b"}, http.StatusCreated)
			id := created["id"].(string)
			rotated := send("POST", "/v1/webhook_endpoints/"+id+"/rotate_secret", "rotate", nil, http.StatusOK)
			rotatedOldest := send("POST", "/v1/webhook_endpoint/rotate_secret", "rotate-oldest", nil, http.StatusOK)
			send("PATCH", "/v1/webhook_endpoints/"+id, "patch", map[string]any{"description": "B"}, http.StatusOK)
			for _, s := range []any{put["secret"], created["secret"], rotated["secret"], rotatedOldest["secret"]} {
				if s, _ := s.(string); !strings.HasPrefix(s, "whsec_") {
					t.Fatalf("first answers show no secret: %v %v %v %v", put, created, rotated, rotatedOldest)
				}
			}

			answers := keptAnswers(t, h)
			if len(answers) != 4 {
				t.Fatalf("%d answers kept, want 4 (the PUT keeps none)", len(answers))
			}
			for _, a := range answers {
				if strings.Contains(a, "whsec_") {
					t.Fatalf("the idempotency table holds a secret: %s", a)
				}
			}

			// One more rotation of each, without a key: every replay shows the new secret.
			send("POST", "/v1/webhook_endpoints/"+id+"/rotate_secret", "rotate-again", nil, http.StatusOK)
			send("POST", "/v1/webhook_endpoint/rotate_secret", "rotate-oldest-again", nil, http.StatusOK)
			now, nowOldest := current("/v1/webhook_endpoints/"+id+"/secret"), current("/v1/webhook_endpoint/secret")
			for _, tc := range []struct {
				method, path, key string
				body              any
				status            int
				first             map[string]any
				want              string
			}{
				{"POST", "/v1/webhook_endpoints", "create", map[string]any{"url": "https://127.0.0.1:9443/b"}, http.StatusCreated, created, now},
				{"POST", "/v1/webhook_endpoints/" + id + "/rotate_secret", "rotate", nil, http.StatusOK, rotated, now},
				{"POST", "/v1/webhook_endpoint/rotate_secret", "rotate-oldest", nil, http.StatusOK, rotatedOldest, nowOldest},
			} {
				if got := replay(tc.method, tc.path, tc.key, tc.body, tc.status, tc.first); got != tc.want {
					t.Errorf("replay of %s %s shows secret %q, want the current %q", tc.method, tc.path, got, tc.want)
				}
			}
			for _, a := range keptAnswers(t, h) {
				if strings.Contains(a, "whsec_") {
					t.Fatalf("the idempotency table holds a secret: %s", a)
				}
			}

			// Deleted: the endpoint has no secret any more.
			h.mustObj(http.StatusOK, "DELETE", "/v1/webhook_endpoints/"+id, nil)
			if got := replay("POST", "/v1/webhook_endpoints", "create", map[string]any{"url": "https://127.0.0.1:9443/b"}, http.StatusCreated, created); got != "" {
				t.Errorf("replay after delete shows secret %q, want none", got)
			}
		})
	}
}

// Only an endpoint's own secret is kept out: an account whose properties hold a "secret"
// of the client's own is kept and replayed as it was (no client input yields a 5xx).
func TestIdempotentAnswerWithAClientsSecretProperty(t *testing.T) {
	h := newHarness(t)
	body := map[string]any{"name": "Acme", "properties": map[string]any{"secret": "whsec_the_clients_own"}}
	first := h.do("POST", "/v1/accounts", h.key[skSandbox], body, "Idempotency-Key", "acct")
	again := h.do("POST", "/v1/accounts", h.key[skSandbox], body, "Idempotency-Key", "acct")
	if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(first.Body) != string(again.Body) ||
		again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("first %d %s, replay %d %s", first.Status, first.Body, again.Status, again.Body)
	}
}

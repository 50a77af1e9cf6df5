package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/testkit/syncbuf"
	"github.com/revops/revops/models"
)

// storedKeys is endpoint id's current and previous keys, read through the store (the
// GORM model, as encryption at rest will require).
func storedKeys(t *testing.T, h *harness, id string) models.WebhookEndpoint {
	t.Helper()
	ep, err := h.store.WebhookEndpointByID(context.Background(), h.objEnv("sandbox"), id)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// ed25519 endpoints (CONTRACT §25): the endpoint shows its public key, derived from the
// private key Revops keeps; GET …/secret is 404; a rotation answers the new public key
// and the old key keeps signing; a PATCH of signing switches the scheme with the same
// overlap. The private key — whole, or the base64 of its seed — appears in no answer
// (create, GET, list, rotate, PATCH, their idempotent replays), no kept idempotency
// record and no log line.
func TestEd25519Endpoints(t *testing.T) {
	for _, dbName := range []string{"postgres", "sqlite"} {
		t.Run(dbName, func(t *testing.T) {
			var logs syncbuf.Buffer
			h := newHarnessOn(t, dbName, func(c *config.Config, d *api.Deps) {
				c.WebhookAllowPrivate = true
				d.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			})
			sk := h.key[skSandbox]
			var answers []string // every body the API sent
			call := func(method, path, key string, body any, status int) map[string]any {
				t.Helper()
				var hdr []string
				if key != "" {
					hdr = []string{"Idempotency-Key", key}
				}
				r := h.do(method, path, sk, body, hdr...)
				answers = append(answers, string(r.Body))
				if r.Status != status {
					t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
				}
				return r.json(t)
			}
			replay := func(method, path, key string, body any, first map[string]any) {
				t.Helper()
				r := h.do(method, path, sk, body, "Idempotency-Key", key)
				answers = append(answers, string(r.Body))
				if r.Header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("replay of %s %s was not replayed: %d %s", method, path, r.Status, r.Body)
				}
				if again := r.json(t); !reflect.DeepEqual(again, first) {
					t.Fatalf("replay of %s %s = %s, want the first answer %v", method, path, r.Body, first)
				}
			}
			var privates []string // every private key the endpoint had
			remember := func(ep models.WebhookEndpoint) {
				for _, k := range []string{ep.Secret, ep.PreviousSecret} {
					if strings.HasPrefix(k, signing.PrivateKeyPrefix) {
						privates = append(privates, k)
					}
				}
			}
			publicOf := func(private string) string {
				t.Helper()
				pub, err := signing.PublicKey(private)
				if err != nil {
					t.Fatal(err)
				}
				return pub
			}

			createBody := map[string]any{"url": "https://127.0.0.1:9443/ed", "signing": "ed25519"}
			created := call("POST", "/v1/webhook_endpoints", "create", createBody, http.StatusCreated)
			id, _ := created["id"].(string)
			ep := storedKeys(t, h, id)
			remember(ep)
			if !strings.HasPrefix(ep.Secret, signing.PrivateKeyPrefix) {
				t.Fatalf("stored key %.8s…, want a whsk_ private key", ep.Secret)
			}
			if _, shown := created["secret"]; shown || created["signing"] != "ed25519" || created["public_key"] != publicOf(ep.Secret) {
				t.Fatalf("create answered %v, want signing ed25519, the public key and no secret", created)
			}
			got := call("GET", "/v1/webhook_endpoints/"+id, "", nil, http.StatusOK)
			if got["public_key"] != created["public_key"] || got["signing"] != "ed25519" {
				t.Fatalf("GET = %v, want the create's public key", got)
			}
			call("GET", "/v1/webhook_endpoints", "", nil, http.StatusOK)
			expectError(t, h.do("GET", "/v1/webhook_endpoints/"+id+"/secret", sk, nil), http.StatusNotFound, "resource_missing")
			// The oldest endpoint is this one: the singular secret route says the same.
			expectError(t, h.do("GET", "/v1/webhook_endpoint/secret", sk, nil), http.StatusNotFound, "resource_missing")

			rotated := call("POST", "/v1/webhook_endpoints/"+id+"/rotate_secret", "rotate", nil, http.StatusOK)
			after := storedKeys(t, h, id)
			remember(after)
			if after.PreviousSecret != ep.Secret || after.PreviousUntil == nil || !strings.HasPrefix(after.Secret, signing.PrivateKeyPrefix) {
				t.Fatalf("after rotation: previous is the old key %v, until %v, current %.5s…", after.PreviousSecret == ep.Secret, after.PreviousUntil, after.Secret)
			}
			if rotated["object"] != "webhook_secret" || rotated["public_key"] != publicOf(after.Secret) ||
				rotated["public_key"] == created["public_key"] || rotated["previous_secret_expires_at"] == nil {
				t.Fatalf("rotation answered %v, want the new public key and the overlap's end", rotated)
			}
			if _, shown := rotated["secret"]; shown {
				t.Fatalf("rotation answered a secret: %v", rotated)
			}
			rotatedOldest := call("POST", "/v1/webhook_endpoint/rotate_secret", "rotate-oldest", nil, http.StatusOK)
			remember(storedKeys(t, h, id))

			// Switch to hmac: a new secret, the ed25519 key still signing for 24 h.
			toHMAC := call("PATCH", "/v1/webhook_endpoints/"+id, "to-hmac", map[string]any{"signing": "hmac-sha256"}, http.StatusOK)
			switched := storedKeys(t, h, id)
			remember(switched)
			if !strings.HasPrefix(switched.Secret, signing.SecretPrefix) || !strings.HasPrefix(switched.PreviousSecret, signing.PrivateKeyPrefix) || switched.PreviousUntil == nil {
				t.Fatalf("after the switch to hmac: current %.6s…, previous %.5s…, until %v", switched.Secret, switched.PreviousSecret, switched.PreviousUntil)
			}
			if toHMAC["signing"] != "hmac-sha256" || toHMAC["public_key"] != nil {
				t.Fatalf("PATCH to hmac answered %v", toHMAC)
			}
			if s := call("GET", "/v1/webhook_endpoints/"+id+"/secret", "", nil, http.StatusOK); s["secret"] != switched.Secret {
				t.Fatalf("GET secret after the switch = %v", s)
			}
			// The same scheme again changes no key.
			call("PATCH", "/v1/webhook_endpoints/"+id, "", map[string]any{"signing": "hmac-sha256"}, http.StatusOK)
			if again := storedKeys(t, h, id); again.Secret != switched.Secret || again.PreviousSecret != switched.PreviousSecret {
				t.Fatal("a PATCH naming the endpoint's own scheme made a new key")
			}
			// And back: an ed25519 key, the hmac secret keeping the overlap.
			toEd := call("PATCH", "/v1/webhook_endpoints/"+id, "to-ed", map[string]any{"signing": "ed25519"}, http.StatusOK)
			back := storedKeys(t, h, id)
			remember(back)
			if back.PreviousSecret != switched.Secret || toEd["public_key"] != publicOf(back.Secret) {
				t.Fatalf("after the switch back: previous is the hmac secret %v, answer %v", back.PreviousSecret == switched.Secret, toEd)
			}

			// An hmac endpoint created with a key, then switched to ed25519: the replay of its
			// create shows the current secret (CONTRACT §14) — and it has none now.
			hmacBody := map[string]any{"url": "https://127.0.0.1:9443/hmac"}
			hmacCreated := call("POST", "/v1/webhook_endpoints", "create-hmac", hmacBody, http.StatusCreated)
			hmacID, _ := hmacCreated["id"].(string)
			call("PATCH", "/v1/webhook_endpoints/"+hmacID, "", map[string]any{"signing": "ed25519"}, http.StatusOK)
			remember(storedKeys(t, h, hmacID))
			r := h.do("POST", "/v1/webhook_endpoints", sk, hmacBody, "Idempotency-Key", "create-hmac")
			answers = append(answers, string(r.Body))
			if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || r.json(t)["secret"] != "" {
				t.Fatalf("replay of the hmac create: %d %s, want the first answer with no secret", r.Status, r.Body)
			}

			for _, tc := range []struct {
				method, path, key string
				body              any
				first             map[string]any
			}{
				{"POST", "/v1/webhook_endpoints", "create", createBody, created},
				{"POST", "/v1/webhook_endpoints/" + id + "/rotate_secret", "rotate", nil, rotated},
				{"POST", "/v1/webhook_endpoint/rotate_secret", "rotate-oldest", nil, rotatedOldest},
				{"PATCH", "/v1/webhook_endpoints/" + id, "to-hmac", map[string]any{"signing": "hmac-sha256"}, toHMAC},
				{"PATCH", "/v1/webhook_endpoints/" + id, "to-ed", map[string]any{"signing": "ed25519"}, toEd},
			} {
				replay(tc.method, tc.path, tc.key, tc.body, tc.first)
			}

			if len(privates) < 4 {
				t.Fatalf("the test saw %d private keys, want at least 4", len(privates))
			}
			kept := keptAnswers(t, h)
			if len(kept) != 6 {
				t.Fatalf("%d answers kept, want 6", len(kept))
			}
			if !strings.Contains(logs.String(), "/v1/webhook_endpoints/"+id) {
				t.Fatalf("the logs hold no line of these requests (the search below would prove nothing): %.300s", logs.String())
			}
			places := map[string][]string{"API answers": answers, "idempotency records": kept, "logs": {logs.String()}}
			for _, private := range privates {
				seed := strings.TrimPrefix(private, signing.PrivateKeyPrefix)
				for where, texts := range places {
					for _, text := range texts {
						if strings.Contains(text, private) || strings.Contains(text, seed) ||
							strings.Contains(text, strings.ReplaceAll(seed, "/", `\/`)) { // JSON may escape "/"
							t.Fatalf("a private key shows in the %s: %s", where, text)
						}
					}
				}
			}
		})
	}
}

// signing is checked on create and PATCH; the §8 singular PUT keeps hmac and refuses it.
func TestEndpointSigningValidation(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true })
	sk := h.key[skSandbox]
	for _, v := range []any{"rsa", "", "ED25519", 1} {
		r := h.do("POST", "/v1/webhook_endpoints", sk, map[string]any{"url": "https://127.0.0.1:9443/x", "signing": v})
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"param":"signing"`) {
			t.Errorf("signing %v: %d %s, want 400 on signing", v, r.Status, r.Body)
		}
	}
	created := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": "https://127.0.0.1:9443/x"})
	if created["signing"] != "hmac-sha256" || created["public_key"] != nil || !strings.HasPrefix(created["secret"].(string), "whsec_") {
		t.Fatalf("default create = %v, want hmac-sha256 with a secret", created)
	}
	r := h.do("PATCH", "/v1/webhook_endpoints/"+created["id"].(string), sk, map[string]any{"signing": "x\u0000"})
	if r.Status != http.StatusBadRequest {
		t.Errorf("PATCH signing with a NUL: %d %s", r.Status, r.Body)
	}
	expectError(t, h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": "https://127.0.0.1:9443/x", "signing": "ed25519"}),
		http.StatusBadRequest, "unknown_parameter")
}

// A manual test (CONTRACT §8) of an ed25519 endpoint is signed like its deliveries: a v1a
// entry its public key verifies.
func TestManualTestOfAnEd25519Endpoint(t *testing.T) {
	h, rc := newReceiving(t)
	ep := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/hooks", "signing": "ed25519"})
	for _, path := range []string{"/v1/webhook_endpoints/" + ep["id"].(string) + "/test", "/v1/webhook_endpoint/test"} {
		if r := h.mustObj(http.StatusOK, "POST", path, map[string]any{"type": "deal-signed"}); r["ok"] != true {
			t.Fatalf("%s: %v", path, r)
		}
	}
	got := rc.Received()
	if len(got) != 2 {
		t.Fatalf("the receiver got %d tests, want 2", len(got))
	}
	for _, r := range got {
		sigs := r.Header.Get("webhook-signature")
		if !strings.HasPrefix(sigs, "v1a,") ||
			signing.Verify(ep["public_key"].(string), r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), sigs, r.Body, time.Now(), 5*time.Minute) != nil {
			t.Fatalf("test send signed %q: want a v1a entry the endpoint's public key verifies", sigs)
		}
	}
}

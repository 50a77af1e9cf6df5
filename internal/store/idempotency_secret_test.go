package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Answers kept by the release before CONTRACT §17's "secrets at rest" held signing
// secrets: the migration turns those whose secret is still the endpoint's (current or
// previous) into a placeholder naming the endpoint — their replays then show its current
// secret — and drops the others, so that the table holds no secret; other routes' answers
// (an account whose properties hold a "secret" of the client's own) stay.
func TestMigrateIdempotencySecretsAway(t *testing.T) {
	forMigratedWithout(t, []int{83}, func(t *testing.T, ctx context.Context, st *store.Store) {
		org, err := orgs.CreateWithHash(ctx, st, "Acme", "old@acme.test", "x")
		if err != nil {
			t.Fatal(err)
		}
		env, _ := st.Environment(ctx, org.ID, models.EnvSandbox)
		now := time.Now().UTC()
		ep, err := webhook.CreateEndpoint(ctx, st, env, models.WebhookEndpoint{URL: "https://a.example/h", Method: "POST", Enabled: true, Secret: "whsec_first"}, now, idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			t.Fatal(err)
		}
		if ep, err = webhook.RotateSecret(ctx, st, env, ep.ID, "whsec_second", now, time.Hour, idempotency.Reply[webhook.SecretObject]{}); err != nil {
			t.Fatal(err)
		}
		// The release before kept secrets in clear (CONTRACT §25 came after).
		if err := st.ExecForTest(ctx, `UPDATE webhook_endpoints SET secret = 'whsec_second', previous_secret = 'whsec_first' WHERE id = ?`, ep.ID); err != nil {
			t.Fatal(err)
		}
		paths := map[string]string{"create": "/v1/webhook_endpoints", "rotate": "/v1/webhook_endpoints/" + ep.ID + "/rotate_secret",
			"gone": "/v1/webhook_endpoint/rotate_secret", "other": "/v1/webhook_endpoints", "account": "/v1/accounts"}
		kept := func(key, response string) {
			t.Helper()
			if err := st.ExecForTest(ctx, `INSERT INTO idempotency_keys (environment_id, idempotency_key, method, path, fingerprint, claim, status, response, claimed_at, completed_at, expires_at, created_at)
					VALUES (?, ?, 'POST', ?, 'f', 'c', 200, ?, ?, ?, ?, ?)`, env.ID, key, paths[key], response, now, now, now.Add(time.Hour), now); err != nil {
				t.Fatal(err)
			}
		}
		kept("create", `{"id":"`+ep.ID+`","secret":"whsec_first","url":"https://a.example/h"}`)
		kept("rotate", `{"object":"webhook_secret","secret":"whsec_second","previous_secret_expires_at":null}`)
		kept("gone", `{"object":"webhook_secret","secret":"whsec_deleted_endpoint"}`)
		kept("other", `{"id":"x","description":"\"secret\":\"whsec_ is how secrets begin"}`)
		kept("account", `{"id":"a","properties":{"secret":"whsec_the_clients_own"}}`)

		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := st.CountForTest(ctx, "idempotency_keys", "idempotency_key = ?", "gone", &n); err != nil || n != 0 {
			t.Fatalf("the answer whose secret is no endpoint's: %d rows left (%v)", n, err)
		}
		for key, want := range map[string]string{
			"create":  `{"id":"` + ep.ID + `","secret":"whsec_second","url":"https://a.example/h"}`,
			"rotate":  `{"object":"webhook_secret","secret":"whsec_second","previous_secret_expires_at":null}`,
			"other":   `{"id":"x","description":"\"secret\":\"whsec_ is how secrets begin"}`,
			"account": `{"id":"a","properties":{"secret":"whsec_the_clients_own"}}`,
		} {
			claim, err := st.ClaimIdempotencyKey(ctx, env, store.IdempotentRequest{Key: key, Method: "POST", Path: paths[key], Fingerprint: "f"})
			if err != nil || claim.Outcome != store.ClaimReplay || string(claim.Body) != want {
				t.Errorf("replay of %s = %v %s (%v), want %s", key, claim.Outcome, claim.Body, err, want)
			}
		}
		if err := st.CountForTest(ctx, "idempotency_keys", "path <> '/v1/accounts' AND response LIKE ?", `%"secret":"whsec%`, &n); err != nil || n != 0 {
			t.Fatalf("%d kept answers still hold a secret (%v)", n, err)
		}
	})
}

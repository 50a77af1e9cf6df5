package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/models"
)

// CONTRACT §25 at the process edge: api, worker and serve refuse to start without
// REVOPS_ENCRYPTION_KEYS, and with keys that open none of the stored secrets (naming key
// ids, never keys); `revops migrate` seals what is in clear and moves what an older key
// sealed onto the first, after which the first key alone serves.
func TestServingNeedsKeysThatOpen(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, ctx context.Context, name, url string) {
		t.Setenv("REVOPS_DATA_DIR", t.TempDir()) // no dev key file to fall back on
		oldKey, newKey, stranger := secretbox.Generate(), secretbox.Generate(), secretbox.Generate()
		out := captureStdout(t)

		t.Setenv(config.EncryptionKeysEnv, "")
		if err := run(ctx, []string{"migrate"}); err != nil {
			t.Fatalf("migrate of an empty database without keys: %v", err)
		}
		if err := run(ctx, []string{"api"}); err == nil || !strings.Contains(err.Error(), config.EncryptionKeysEnv+" is not set") {
			t.Fatalf("api without keys: %v", err)
		}

		t.Setenv(config.EncryptionKeysEnv, oldKey)
		st, err := app.OpenStore(ctx, mustConfig(t), app.NewLogger(mustConfig(t)))
		if err != nil {
			t.Fatal(err)
		}
		org, err := orgs.CreateWithHash(ctx, st, "Acme", "a@example.com", "x")
		if err != nil {
			t.Fatal(err)
		}
		env, _ := st.Environment(ctx, org.ID, models.EnvLive)
		ep, err := webhook.CreateEndpoint(ctx, st, env, models.WebhookEndpoint{URL: "https://a.example/h", Method: "POST", Enabled: true,
			Secret: "whsec_sealedunderold"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
		_ = st.Close()
		if err != nil {
			t.Fatal(err)
		}
		// A secret the release before kept in clear.
		if err := rawExec(t, name, url, "UPDATE webhook_endpoints SET previous_secret = 'whsec_legacyclear'"); err != nil {
			t.Fatal(err)
		}

		t.Setenv(config.EncryptionKeysEnv, "")
		if err := run(ctx, []string{"migrate"}); err == nil || !strings.Contains(err.Error(), "1 secret(s) stored in clear") {
			t.Fatalf("migrate without keys over stored secrets: %v", err)
		}
		t.Setenv(config.EncryptionKeysEnv, stranger)
		oldID := keyIDOf(t, oldKey)
		// openStore, not run: a process the check let through would serve until stopped.
		if st, err := app.OpenStore(ctx, mustConfig(t), app.NewLogger(mustConfig(t))); err == nil {
			_ = st.Close()
			t.Fatal("a serving process started with keys that open nothing")
		} else if !strings.Contains(err.Error(), oldID) || strings.Contains(err.Error(), stranger) || strings.Contains(err.Error(), oldKey) {
			t.Fatalf("refusal of keys that open nothing: %v", err)
		}

		t.Setenv(config.EncryptionKeysEnv, newKey+","+oldKey)
		out.Reset()
		if err := run(ctx, []string{"migrate"}); err != nil || !strings.Contains(out.String(), "1 endpoint(s) re-sealed") {
			t.Fatalf("migrate with a new key first: %v, printed %q", err, out.String())
		}
		t.Setenv(config.EncryptionKeysEnv, newKey)
		st, err = app.OpenStore(ctx, mustConfig(t), app.NewLogger(mustConfig(t)))
		if err != nil {
			t.Fatalf("the new key alone after migrate: %v", err)
		}
		defer st.Close()
		got, err := st.WebhookEndpointByID(ctx, env, ep.ID)
		if err != nil || got.Secret != "whsec_sealedunderold" || got.PreviousSecret != "whsec_legacyclear" {
			t.Fatalf("endpoint read with the new key alone: %q %q (%v)", got.Secret, got.PreviousSecret, err)
		}
	})
}

func keyIDOf(t *testing.T, key string) string {
	t.Helper()
	kr, err := secretbox.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	return kr.Current()
}

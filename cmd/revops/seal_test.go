package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// CONTRACT §25, rolling upgrades: `revops migrate` leaves the secrets of the release
// before unbound (and says how to switch) until REVOPS_SEAL_BOUND=true; then it binds
// each to its row, and a second run finds nothing.
func TestMigrateBindsSecretsOnceSwitched(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, ctx context.Context, name, url string) {
		t.Setenv(config.EncryptionKeysEnv, testdb.Keys())
		migrate := func() string {
			t.Helper()
			out := captureStdout(t)
			if err := run(ctx, []string{"migrate"}); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			return out.String()
		}
		migrate()

		// Secrets as a process of the release before (or of this one, unswitched) writes them.
		o := store.DefaultOptions()
		o.Keyring, o.SealBound = testdb.Keyring(), new(bool)
		prev, err := store.OpenWith(ctx, url, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer prev.Close()
		env := testdb.Seed(t, prev, models.EnvLive)
		ep, err := webhook.CreateEndpoint(ctx, prev, env, models.WebhookEndpoint{URL: "https://r.example/h", Method: "POST", Enabled: true,
			Secret: "whsec_unboundsecret", Headers: map[string]string{"X-Api-Key": "unboundheader"}}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			t.Fatal(err)
		}

		if out := migrate(); !strings.Contains(out, "0 endpoint(s) re-sealed") || !strings.Contains(out, config.SealBoundEnv+"=true") {
			t.Fatalf("migrate, unswitched: %q", out)
		}
		assertForm(t, name, url, ep.ID, false)

		t.Setenv(config.SealBoundEnv, "true")
		if out := migrate(); !strings.Contains(out, "1 endpoint(s) re-sealed") || !strings.Contains(out, "bound to their row") {
			t.Fatalf("migrate, switched: %q", out)
		}
		assertForm(t, name, url, ep.ID, true)
		if out := migrate(); !strings.Contains(out, "0 endpoint(s) re-sealed") {
			t.Fatalf("second migrate, switched: %q", out)
		}
		got, err := prev.WebhookEndpointByID(ctx, env, ep.ID)
		if err != nil || got.Secret != "whsec_unboundsecret" || got.Headers["X-Api-Key"] != "unboundheader" {
			t.Fatalf("after the re-seal: %+v, %v", got, err)
		}
		st, err := app.OpenStore(ctx, mustConfig(t), app.NewLogger(mustConfig(t)))
		if err != nil {
			t.Fatal(err)
		}
		_ = st.Close()
	})
}

// assertForm checks the form of endpoint id's sealed secret and headers as stored.
func assertForm(t *testing.T, dialect, url, id string, bound bool) {
	t.Helper()
	var rows []struct{ Secret, Headers string }
	if err := testdb.Raw(t, dialect, url).Raw(`SELECT secret, headers FROM webhook_endpoints WHERE id = ?`, id).Scan(&rows).Error; err != nil || len(rows) != 1 {
		t.Fatalf("%v (%d rows)", err, len(rows))
	}
	for _, v := range []string{rows[0].Secret, rows[0].Headers} {
		if !secretbox.IsSealed(v) || secretbox.IsBound(v) != bound {
			t.Errorf("stored %.20q…, want bound %v", v, bound)
		}
	}
}

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

func TestMigrateIsIdempotentOnBothDatabases(t *testing.T) {
	forFresh(t, func(t *testing.T, ctx context.Context, name, url string) {
		st := open(t, url)
		first, err := st.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(first) == 0 {
			t.Fatal("no migration applied on an empty database")
		}
		again, err := st.Migrate(ctx)
		if err != nil || len(again) != 0 {
			t.Fatalf("second migrate applied %v, err %v", again, err)
		}
		org, err := orgs.CreateWithHash(ctx, st, "Acme", "a@example.com", "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, env := range []string{models.EnvLive, models.EnvSandbox} {
			e, err := st.Environment(ctx, org.ID, env)
			if err != nil || e.Name != env {
				t.Fatalf("environment %s: %+v %v", env, e, err)
			}
		}
		if _, err := orgs.CreateWithHash(ctx, st, "Other", "a@example.com", "x"); err == nil {
			t.Error("duplicate email accepted")
		}
	})
}

func TestAPIKeyLifecycle(t *testing.T) {
	ctx := context.Background()
	st := testdb.New(t)
	org, err := orgs.CreateWithHash(ctx, st, "Acme", "b@example.com", "x")
	if err != nil {
		t.Fatal(err)
	}
	env, _ := st.Environment(ctx, org.ID, "live")
	k := models.APIKey{ID: "k1", OrganizationID: org.ID, EnvironmentID: env.ID, Environment: "live", Type: "secret", Prefix: "sk_live_", Last4: "abcd", Hash: "h1", CreatedAt: time.Now()}
	if _, err := st.InTx(ctx, env, func(tx *store.Tx) error { return tx.InsertAPIKey(&k) }); err != nil {
		t.Fatal(err)
	}
	got, err := st.APIKeyByHash(ctx, "h1")
	if err != nil || got.ID != "k1" {
		t.Fatalf("by hash: %+v %v", got, err)
	}
	if _, err := st.APIKeyByHash(ctx, "nope"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("unknown hash: %v", err)
	}
	if _, err := keys.NewManager(st).Revoke(ctx, "other-org", "k1"); !errors.Is(err, apperr.ErrNotFound) {
		t.Errorf("revoke from another org: %v", err)
	}
}

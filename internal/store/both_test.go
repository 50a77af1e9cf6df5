package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
)

// seeded is a migrated store holding one organization, and one of its environments.
type seeded struct {
	st  *store.Store
	env store.Env
	url string
}

// bothDatabases opens a fresh PostgreSQL and a fresh SQLite store, migrated, each with an
// organization "Acme", for tests of behaviour that must hold on both.
func bothDatabases(t *testing.T, envName string) map[string]seeded {
	t.Helper()
	ctx := context.Background()
	out := map[string]seeded{}
	for name, url := range map[string]string{"postgres": testdb.URL(t), "sqlite": filepath.Join(t.TempDir(), "revops.db")} {
		st := testdb.Open(t, url)
		org, err := st.CreateOrganization(ctx, "Acme", "a@example.com", "x")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		env, err := st.Environment(ctx, org.ID, envName)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = seeded{st: st, env: env, url: url}
	}
	return out
}

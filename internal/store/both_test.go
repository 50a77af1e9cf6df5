package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
)

// seeded is a migrated store holding one organization, and one of its environments.
type seeded struct {
	st   *store.Store
	env  store.Env
	url  string
	name string // the database's: postgres or sqlite
}

// bothDatabases is testdb.Both in this package's words.
func bothDatabases(t *testing.T, envName string) map[string]seeded {
	t.Helper()
	out := map[string]seeded{}
	for name, s := range testdb.Both(t, envName) {
		out[name] = seeded{st: s.Store, env: s.Env, url: s.URL, name: name}
	}
	return out
}

// forBoth runs test on each database, as a subtest named after it, with its seeded store
// and a background context.
func forBoth(t *testing.T, envName string, test func(t *testing.T, ctx context.Context, db seeded)) {
	t.Helper()
	for name, db := range bothDatabases(t, envName) {
		t.Run(name, func(t *testing.T) { test(t, context.Background(), db) })
	}
}

// postgresOnly skips a benchmark that measures PostgreSQL when there is none.
func postgresOnly(b *testing.B) {
	b.Helper()
	if os.Getenv(testdb.EnvVar) == "" {
		b.Skipf("%s is not set: this benchmark measures PostgreSQL", testdb.EnvVar)
	}
}

// keyed are the default bounds with the test keyring: a store opened outside testdb.
func keyed() store.Options {
	o := store.DefaultOptions()
	o.Keyring = testdb.Keyring()
	return o
}

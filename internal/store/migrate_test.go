package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
)

// freshBoth opens an empty, unmigrated database of each kind.
func freshBoth(t *testing.T) map[string]string {
	return map[string]string{"postgres": testdb.URL(t), "sqlite": filepath.Join(t.TempDir(), "revops.db")}
}

// forFresh runs test on an empty, unmigrated database of each kind (url), as a subtest
// named after it, with a background context.
func forFresh(t *testing.T, test func(t *testing.T, ctx context.Context, name, url string)) {
	t.Helper()
	for name, url := range freshBoth(t) {
		t.Run(name, func(t *testing.T) { test(t, context.Background(), name, url) })
	}
}

// forMigratedWithout runs test on a database of each kind migrated but for the versions
// skip: as the release before them left it.
func forMigratedWithout(t *testing.T, skip []int, test func(t *testing.T, ctx context.Context, st *store.Store)) {
	t.Helper()
	forFresh(t, func(t *testing.T, ctx context.Context, _, url string) {
		st := open(t, url)
		if _, err := st.MigrateWithout(ctx, skip...); err != nil {
			t.Fatal(err)
		}
		test(t, ctx, st)
	})
}

// open opens a store on url with the test keyring (keyed), closed when the test ends.
func open(t *testing.T, url string) *store.Store {
	t.Helper()
	return openWith(t, url, keyed())
}

// openWith opens a store on url with the options o, closed when the test ends.
func openWith(t testing.TB, url string, o store.Options) *store.Store {
	t.Helper()
	st, err := store.OpenWith(context.Background(), url, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// Replicas of a new release start together: their migrators must apply each version once
// and all succeed.
func TestMigrateConcurrentMigrators(t *testing.T) {
	forFresh(t, func(t *testing.T, ctx context.Context, name, url string) {
		const n = 4
		stores := make([]*store.Store, n)
		for i := range stores {
			stores[i] = open(t, url)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		applied := make([][]string, n)
		for i, st := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				applied[i], errs[i] = st.Migrate(ctx)
			}()
		}
		wg.Wait()
		total := 0
		for i := range errs {
			if errs[i] != nil {
				t.Fatalf("migrator %d: %v", i, errs[i])
			}
			total += len(applied[i])
		}
		var versions int64
		versions, err := stores[0].TestCount(ctx, "SELECT COUNT(*) FROM schema_migrations")
		if err != nil {
			t.Fatal(err)
		}
		if total != int(versions) {
			t.Errorf("migrators applied %d migrations in all, the database records %d: some ran twice or went unrecorded", total, versions)
		}
		if err := stores[0].CheckSchema(ctx); err != nil {
			t.Errorf("after concurrent migrations: %v", err)
		}
	})
}

// A failed non-transactional step (a unique index built concurrently over duplicates)
// leaves its version unapplied; once the data is fixed, running migrate again builds a
// valid index — not the INVALID one the failed build left behind.
func TestMigrateNonTransactionalStepRetried(t *testing.T) {
	table := store.ExtraMigration(90001, "test_table", `
CREATE TABLE retention_probe (k INTEGER NOT NULL);
INSERT INTO retention_probe (k) VALUES (1), (1), (2)`, false)
	index := store.ExtraMigration(90002, "test_index_concurrently",
		`CREATE UNIQUE INDEX {{concurrently}} IF NOT EXISTS retention_probe_k ON retention_probe (k)`, true)
	forFresh(t, func(t *testing.T, ctx context.Context, name, url string) {
		st := open(t, url)
		if _, err := st.MigrateWith(ctx, table, index); err == nil || !strings.Contains(err.Error(), "90002") {
			t.Fatalf("migrate over duplicates: got %v, want the index migration to fail", err)
		}
		if err := st.CheckSchemaWith(ctx, table, index); !errors.Is(err, store.ErrSchemaMismatch) || !strings.Contains(err.Error(), "[90002]") {
			t.Fatalf("after the failed step: %v, want version 90002 missing", err)
		}
		if err := st.ExecForTest(ctx, "DELETE FROM retention_probe WHERE k = 1"); err != nil {
			t.Fatal(err)
		}
		applied, err := st.MigrateWith(ctx, table, index)
		if err != nil {
			t.Fatalf("rerun: %v", err)
		}
		if fmt.Sprint(applied) != "[90002_test_index_concurrently]" {
			t.Errorf("rerun applied %v, want only the index", applied)
		}
		if err := st.CheckSchemaWith(ctx, table, index); err != nil {
			t.Errorf("after the rerun: %v", err)
		}
		if name == "postgres" {
			valid, err := st.TestCount(ctx, `SELECT COUNT(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
					WHERE c.relname = 'retention_probe_k' AND i.indisvalid`)
			if err != nil || valid != 1 {
				t.Fatalf("valid index retention_probe_k: %d (%v), want 1", valid, err)
			}
		}
		if err := st.ExecForTest(ctx, "INSERT INTO retention_probe (k) VALUES (2)"); err == nil {
			t.Error("a duplicate was accepted: the unique index is not in force")
		}
		// A third run has nothing to do.
		if applied, err := st.MigrateWith(ctx, table, index); err != nil || len(applied) != 0 {
			t.Errorf("third run: applied %v, %v", applied, err)
		}
	})
}

// Serving processes refuse a database that is behind (not migrated) or ahead (migrated
// by a release they do not know), with an error naming the versions.
func TestCheckSchema(t *testing.T) {
	forFresh(t, func(t *testing.T, ctx context.Context, name, url string) {
		st := open(t, url)
		err := st.CheckSchema(ctx)
		if !errors.Is(err, store.ErrSchemaMismatch) || !strings.Contains(err.Error(), "revops migrate") ||
			!strings.Contains(err.Error(), fmt.Sprintf("needs version %d", store.SchemaVersion())) {
			t.Fatalf("empty database: %v", err)
		}
		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := st.CheckSchema(ctx); err != nil {
			t.Fatalf("migrated: %v", err)
		}
		next := store.ExtraMigration(90001, "next_release", "CREATE TABLE next_release (id INTEGER)", false)
		if err := st.CheckSchemaWith(ctx, next); err == nil || !strings.Contains(err.Error(), "revops migrate") || !strings.Contains(err.Error(), "[90001]") {
			t.Errorf("behind a newer binary: %v", err)
		}
		if _, err := st.MigrateWith(ctx, next); err != nil {
			t.Fatal(err)
		}
		err = st.CheckSchema(ctx)
		if !errors.Is(err, store.ErrSchemaMismatch) || !strings.Contains(err.Error(), "version 90001") || !strings.Contains(err.Error(), "newer release") {
			t.Errorf("ahead of this binary: %v", err)
		}
	})
}

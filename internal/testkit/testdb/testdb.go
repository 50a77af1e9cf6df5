// Package testdb gives tests a real, freshly migrated PostgreSQL database.
// The README's test command (scripts/test) starts PostgreSQL and sets
// REVOPS_TEST_DATABASE_URL to an administrative connection.
package testdb

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/internal/store"
)

// EnvVar names the administrative PostgreSQL URL tests use.
const EnvVar = "REVOPS_TEST_DATABASE_URL"

// URL creates an empty database for this test and returns its URL; it is dropped at cleanup.
func URL(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvVar)
	if admin == "" {
		t.Fatalf("%s is not set: run the tests with ./scripts/test, which starts PostgreSQL", EnvVar)
	}
	db, err := gorm.Open(postgres.Open(admin), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("connect to test PostgreSQL: %v", err)
	}
	sqlDB, _ := db.DB()
	t.Cleanup(func() { _ = sqlDB.Close() })
	name := "revops_test_" + strings.ToLower(rand.Text()[:12])
	if err := db.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error; err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvVar, err)
	}
	u.Path = "/" + name
	return u.String()
}

// New returns a migrated store on a fresh database.
func New(t testing.TB) *store.Store {
	t.Helper()
	return Open(t, URL(t))
}

// Open opens and migrates the store at url (a PostgreSQL URL or a SQLite file) with the
// default bounds (store.DefaultOptions); it is closed at cleanup.
func Open(t testing.TB, url string) *store.Store {
	t.Helper()
	return OpenWith(t, url, store.DefaultOptions())
}

// OpenWith is Open within the bounds o: pool sizes and timeouts (CONTRACT §21). The
// store is wired as internal/app wires it at start but for after commit: its changes
// fan out through internal/domain/webhook's fan-out, and what they commit is started
// only by what the test runs (a dispatcher it sets, a sweeper) — SetAfterCommit.
func OpenWith(t testing.TB, url string, o store.Options) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if o.Keyring == nil {
		o.Keyring = Keyring()
	}
	st, err := store.OpenWith(ctx, url, o, nil)
	if err != nil {
		t.Fatalf("open test store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	st.SetFanOut(webhook.NewFanOut())
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return st
}

// Keys is the REVOPS_ENCRYPTION_KEYS of every test store and process this test binary
// starts: a second replica on the same database must open what the first sealed.
var Keys = sync.OnceValue(secretbox.Generate)

// Keyring is Keys parsed.
func Keyring() *secretbox.Keyring {
	kr, err := secretbox.Parse(Keys())
	if err != nil {
		panic(err) // Generate makes a valid key
	}
	return kr
}

// Querier is a pgx connection, pooled or not.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// SecondaryIndexes are the non-unique indexes of tables: their names, and the statements
// that build them again. Bulk loads of the benchmarks drop them first and build them
// after, which is many times faster than loading under them.
func SecondaryIndexes(ctx context.Context, q Querier, tables ...string) (names, defs []string, err error) {
	for _, table := range tables {
		rows, err := q.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 AND indexdef NOT LIKE 'CREATE UNIQUE%'`, table)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var n, d string
			if err := rows.Scan(&n, &d); err != nil {
				rows.Close()
				return nil, nil, err
			}
			names, defs = append(names, n), append(defs, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
	}
	return names, defs, nil
}

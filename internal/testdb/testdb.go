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
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

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

// Open opens and migrates the store at url (a PostgreSQL URL or a SQLite file); it is
// closed at cleanup.
func Open(t testing.TB, url string) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, url, nil)
	if err != nil {
		t.Fatalf("open test store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return st
}

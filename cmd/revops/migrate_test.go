package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/testkit/testdb"
)

// api, worker and serve do not migrate: on a database that is not migrated they refuse
// to start, naming the versions and `revops migrate`; once it has run they get past the
// schema check. revops migrate twice is harmless.
func TestServingRefusesUnmigratedDatabase(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, ctx context.Context, name, url string) {
		t.Setenv(config.EncryptionKeysEnv, testdb.Keys())
		for _, mode := range []string{"api", "worker", "serve"} {
			err := run(ctx, []string{mode})
			if err == nil || !strings.Contains(err.Error(), "run `revops migrate`") || !strings.Contains(err.Error(), "database is at version 0") {
				t.Errorf("%s on an empty database: %v, want a refusal naming revops migrate", mode, err)
			}
		}
		out := captureStdout(t)
		for range 2 {
			if err := run(ctx, []string{"migrate"}); err != nil {
				t.Fatalf("migrate: %v", err)
			}
		}
		if !strings.Contains(out.String(), "applied ") || !strings.Contains(out.String(), "database is up to date") {
			t.Errorf("migrate twice printed %q", out.String())
		}
		st, err := app.OpenStore(ctx, mustConfig(t), app.NewLogger(mustConfig(t)))
		if err != nil {
			t.Fatalf("after migrate, a serving process still refuses: %v", err)
		}
		_ = st.Close()
		// A newer release's migration: this binary refuses the database.
		if err := rawExec(t, name, url, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999999, 'future', CURRENT_TIMESTAMP)"); err != nil {
			t.Fatal(err)
		}
		if err := run(ctx, []string{"worker"}); err == nil || !strings.Contains(err.Error(), "999999") {
			t.Errorf("worker on a database ahead of it: %v", err)
		}
		if err := run(ctx, []string{"migrate"}); err == nil || !strings.Contains(err.Error(), "newer release") {
			t.Errorf("migrate on a database ahead of it: %v", err)
		}
	})
}

func mustConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := loadConfig(newFlagSet("api"), "api", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// rawExec writes to the database behind the store's back, as another release would.
func rawExec(t *testing.T, dialect, url, sql string) error {
	t.Helper()
	d := sqlite.Open(url)
	if dialect == "postgres" {
		d = postgres.Open(url)
	}
	db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return err
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	return db.Exec(sql).Error
}

// onBothDatabases runs test as a subtest on PostgreSQL and on a SQLite file (name is the
// dialect, url the database's), each with a serving process's environment on it.
func onBothDatabases(t *testing.T, test func(t *testing.T, ctx context.Context, name, url string)) {
	for name, url := range map[string]string{"postgres": testdb.URL(t), "sqlite": filepath.Join(t.TempDir(), "revops.db")} {
		t.Run(name, func(t *testing.T) {
			servingEnv(t, url)
			test(t, context.Background(), name, url)
		})
	}
}

// captureStdout points the commands' stdout at a buffer until the test ends.
func captureStdout(t *testing.T) *bytes.Buffer {
	var out bytes.Buffer
	saved := stdout
	stdout = &out
	t.Cleanup(func() { stdout = saved })
	return &out
}

// servingEnv is the environment of a serving process on the database at url that the
// tests start in-process: TLS left to a proxy on loopback, no metrics listener.
func servingEnv(t *testing.T, url string) {
	t.Setenv("REVOPS_DATABASE_URL", url)
	t.Setenv("REVOPS_TLS", "proxy")
	t.Setenv("REVOPS_TRUSTED_PROXIES", "127.0.0.1")
	t.Setenv("REVOPS_METRICS_ADDR", "")
}

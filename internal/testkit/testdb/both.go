package testdb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Seeded is a migrated store holding one organization, "Acme", and one of its
// environments.
type Seeded struct {
	Store *store.Store
	Env   models.Env
	URL   string // the PostgreSQL URL or the SQLite file
}

// Both opens a fresh PostgreSQL and a fresh SQLite store, migrated, each seeded with an
// organization and its environment envName, keyed "postgres" and "sqlite": for the rules
// that must hold on both databases (CONTRACT §15).
func Both(t testing.TB, envName string) map[string]Seeded {
	t.Helper()
	out := map[string]Seeded{}
	for name, url := range map[string]string{"postgres": URL(t), "sqlite": filepath.Join(t.TempDir(), "revops.db")} {
		st := Open(t, url)
		out[name] = Seeded{Store: st, Env: Seed(t, st, envName), URL: url}
	}
	return out
}

// ForBoth runs test as a subtest on each store of Both, with a background context.
func ForBoth(t *testing.T, envName string, test func(t *testing.T, ctx context.Context, db Seeded)) {
	t.Helper()
	for name, db := range Both(t, envName) {
		t.Run(name, func(t *testing.T) { test(t, context.Background(), db) })
	}
}

// Seed creates the organization "Acme" in st and returns its environment envName.
func Seed(t testing.TB, st *store.Store, envName string) models.Env {
	t.Helper()
	return SeedOrg(t, st, "Acme", "a@example.com", envName)
}

// SeedOrg creates the organization name, owned by email, in st and returns its
// environment envName: for a test with several organizations.
func SeedOrg(t testing.TB, st *store.Store, name, email, envName string) models.Env {
	t.Helper()
	ctx := context.Background()
	org, err := orgs.CreateWithHash(ctx, st, name, email, "x")
	if err != nil {
		t.Fatal(err)
	}
	env, err := st.Environment(ctx, org.ID, envName)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// Raw opens the database at url ("postgres" or "sqlite" dialect) with GORM alone, beside
// the store, for a test that reads or breaks rows behind the store's back; it is closed
// at cleanup.
func Raw(t testing.TB, dialect, url string) *gorm.DB {
	t.Helper()
	var d gorm.Dialector = sqlite.Open(url)
	if dialect == "postgres" {
		d = postgres.Open(url)
	}
	db, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	return db
}

// UsageWrite is a one-metric usage batch of account "a"'s seats on day at: transaction
// tx in mode, with body hash hash and value value, for tests of the usage write.
func UsageWrite(tx, mode, hash, value string, at time.Time) store.UsageWrite {
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	return store.UsageWrite{
		Batch: models.UsageBatch{TransactionID: tx, Mode: mode, BodyHash: hash, Response: `{}`, MetricsCount: 1, ReceivedAt: at},
		Events: []models.UsageEvent{{ID: tx + "-0", AccountID: "a", Product: "p", MetricName: "seats",
			MetricValue: value, MetricResolution: "day", Metadata: `{"k":1}`, Timestamp: at}},
		Rollups: []models.UsageRollup{{AccountID: "a", Product: "p", MetricName: "seats", Resolution: "day",
			PeriodStart: day, Value: value}},
	}
}

package usage_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// seeded is a migrated store holding one organization, and one of its environments.
type seeded struct {
	st  *store.Store
	env models.Env
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

// usageWrite is a one-metric batch of account a's seats on day at.
func usageWrite(tx, mode, hash, value string, at time.Time) store.UsageWrite {
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	return store.UsageWrite{
		Batch: models.UsageBatch{TransactionID: tx, Mode: mode, BodyHash: hash, Response: `{}`, MetricsCount: 1, ReceivedAt: at},
		Events: []models.UsageEvent{{ID: tx + "-0", AccountID: "a", Product: "p", MetricName: "seats",
			MetricValue: value, MetricResolution: "day", Metadata: `{"k":1}`, Timestamp: at}},
		Rollups: []models.UsageRollup{{AccountID: "a", Product: "p", MetricName: "seats", Resolution: "day",
			PeriodStart: day, Value: value}},
	}
}

// numDiffer reports whether two decimal texts differ ("4" and "4.0" are equal: SQLite
// may say either).
func numDiffer(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 != nil || err2 != nil || x != y
}

func openRaw(t *testing.T, dialect, url string) *gorm.DB {
	t.Helper()
	var d gorm.Dialector = sqlite.Open(url)
	if dialect == "postgres" {
		d = postgres.Open(url)
	}
	db, err := gorm.Open(d, &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	t.Cleanup(func() { _ = sqlDB.Close() })
	return db
}

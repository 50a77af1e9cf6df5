package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

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

// The rollup rules hold on both databases: increment adds, a set replaces only when its
// ingest sequence is newer than the row's last set, a reused id with another hash is 409.
func TestUsageRollupRulesOnBothDatabases(t *testing.T) {
	ctx := context.Background()
	for name, db := range bothDatabases(t, models.EnvSandbox) {
		t.Run(name, func(t *testing.T) {
			st, env := db.st, db.env
			now := time.Now().UTC().Truncate(time.Microsecond)
			value := func() string {
				rows, _, err := st.UsageSummary(ctx, env, store.UsageSummaryFilter{Resolution: "day", Limit: 10})
				if err != nil || len(rows) != 1 {
					t.Fatalf("summary %v %v", rows, err)
				}
				return rows[0].Value
			}
			steps := []struct {
				w    store.UsageWrite
				want string
			}{
				{usageWrite("t1", "increment", "h1", "1.5", now), "1.5"},
				{usageWrite("t2", "increment", "h2", "2.5", now), "4"},
				{usageWrite("t3", "set", "h3", "10", now), "10"},
				{usageWrite("t4", "increment", "h4", "-1", now), "9"},
				{usageWrite("t5", "set", "h5", "2", now), "2"},
			}
			for _, s := range steps {
				if _, err := st.IngestUsage(ctx, env, s.w, idempotency.Reply[store.UsageResult]{}); err != nil {
					t.Fatal(err)
				}
				if got := value(); numDiffer(got, s.want) {
					t.Fatalf("after %s: %s, want %s", s.w.Batch.TransactionID, got, s.want)
				}
			}
			res, err := st.IngestUsage(ctx, env, usageWrite("t5", "set", "h5", "2", now), idempotency.Reply[store.UsageResult]{})
			if err != nil || !res.Duplicate || res.Batch.Seq == 0 {
				t.Fatalf("replay: %+v %v", res, err)
			}
			var cerr *apperr.ConflictError
			if _, err := st.IngestUsage(ctx, env, usageWrite("t5", "set", "other", "3", now), idempotency.Reply[store.UsageResult]{}); !errors.As(err, &cerr) || cerr.Code != "transaction_id_reused" {
				t.Fatalf("reuse: %v", err)
			}
			// A set whose sequence is older than the row's last set does not apply.
			raw := openRaw(t, name, db.url)
			if err := raw.Exec("UPDATE usage_rollups SET set_seq = 1000000").Error; err != nil {
				t.Fatal(err)
			}
			if _, err := st.IngestUsage(ctx, env, usageWrite("t6", "set", "h6", "99", now), idempotency.Reply[store.UsageResult]{}); err != nil {
				t.Fatal(err)
			}
			if got := value(); numDiffer(got, "2") {
				t.Fatalf("stale set applied: %s", got)
			}
			if b, e, r, err := st.UsageCounts(ctx, env); err != nil || b != 6 || e != 6 || r != 1 {
				t.Fatalf("counts %d %d %d %v", b, e, r, err)
			}
		})
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

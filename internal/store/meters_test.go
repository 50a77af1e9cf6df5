package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/revops/revops/internal/meters"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testdb"
	"github.com/revops/revops/internal/usage"
	"github.com/revops/revops/models"
)

// TestUsageBatchesGenMigration: on both databases, batches stored before the meters'
// migrations read as taken (gen 0: a meter's backfill counts them, the consumer never
// takes them again), and a batch stored after waits for the consumer (gen NULL).
func TestUsageBatchesGenMigration(t *testing.T) {
	ctx := context.Background()
	for name, url := range map[string]string{"postgres": testdb.URL(t), "sqlite": filepath.Join(t.TempDir(), "revops.db")} {
		t.Run(name, func(t *testing.T) {
			st, err := store.Open(ctx, url, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if _, err := st.MigrateBelow(ctx, 84); err != nil {
				t.Fatal(err)
			}
			org, err := st.CreateOrganization(ctx, "Acme", "a@example.com", "x")
			if err != nil {
				t.Fatal(err)
			}
			env, err := st.Environment(ctx, org.ID, "live")
			if err != nil {
				t.Fatal(err)
			}
			ingest := func(tx string) {
				t.Helper()
				w := store.UsageWrite{Batch: models.UsageBatch{TransactionID: tx, Mode: "increment", BodyHash: tx, Response: "{}",
					MetricsCount: 1, ReceivedAt: time.Now()},
					Events: []models.UsageEvent{{ID: tx, AccountID: "a", Product: "p", MetricName: "m", MetricValue: "1",
						MetricResolution: "minute", Metadata: "{}", Timestamp: time.Now()}},
					Rollups: []models.UsageRollup{{AccountID: "a", Product: "p", MetricName: "m", Resolution: "minute",
						PeriodStart: time.Now().UTC().Truncate(time.Minute), Value: "1"}}}
				if _, err := st.IngestUsage(ctx, env, w, store.Reply[store.UsageResult]{}); err != nil {
					t.Fatal(err)
				}
			}
			ingest("before")
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			ingest("after")
			for tx, want := range map[string]int64{"before": 1, "after": 0} {
				n, err := st.TestCount(ctx, `SELECT COUNT(*) FROM usage_batches WHERE transaction_id = ? AND gen = 0`, tx)
				if err != nil || n != want {
					t.Fatalf("%s: %d batches with gen 0 (err %v), want %d", tx, n, err, want)
				}
			}
			waiting, err := st.WaitingUsageEnvironments(ctx, 10)
			if err != nil || len(waiting) != 1 || waiting[0] != env.ID {
				t.Fatalf("waiting environments %v (err %v), want the one with the batch stored after", waiting, err)
			}
		})
	}
}

// TestDeletedMeterLeavesNoFigures: deleting a meter removes its kept figures and
// distinct values on both databases, and keeps the other meters' figures.
func TestDeletedMeterLeavesNoFigures(t *testing.T) {
	ctx := context.Background()
	for name, db := range bothDatabases(t, "live") {
		t.Run(name, func(t *testing.T) {
			svc := &meters.Service{Store: db.st}
			var ids []string
			for _, key := range []string{"gone", "kept"} {
				m, err := svc.Create(ctx, db.env, meters.Definition{Key: key, MetricName: "calls", Aggregation: models.AggUniqueCount,
					ValueKey: "user"}, time.Now(), store.Reply[models.Meter]{})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, m.ID)
			}
			body := `{"transaction_id":"t1","mode":"increment","event_metrics":[{"account_id":"a","product":"p","metric_name":"calls",` +
				`"metric_value":1,"metric_resolution":"minute","metadata":{"user":"u1"}}]}`
			if _, err := usage.Ingest(ctx, db.st, db.env, []byte(body), time.Now(), store.Reply[store.UsageResult]{}); err != nil {
				t.Fatal(err)
			}
			if _, err := meters.Consume(ctx, db.st); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Delete(ctx, db.env, "gone", store.Reply[models.Meter]{}); err != nil {
				t.Fatal(err)
			}
			for i, want := range []int64{0, 1} {
				// One day figure and one member day per meter: one row of one value.
				for _, table := range []string{"meter_figures WHERE kind = 'day' AND", "meter_members WHERE"} {
					n, err := db.st.TestCount(ctx, `SELECT COUNT(*) FROM `+table+` meter_id = ?`, ids[i])
					if err != nil || n != want {
						t.Fatalf("meter %d: %d rows in %s (err %v), want %d", i, n, table, err, want)
					}
				}
			}
		})
	}
}

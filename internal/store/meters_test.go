package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// TestUsageBatchesGenMigration: on both databases, batches stored before the meters'
// migrations read as taken (gen 0: a meter's backfill counts them, the consumer never
// takes them again), and a batch stored after waits for the consumer (gen NULL).
func TestUsageBatchesGenMigration(t *testing.T) {
	forFresh(t, func(t *testing.T, ctx context.Context, name, url string) {
		st := open(t, url)
		if _, err := st.MigrateBelow(ctx, 84); err != nil {
			t.Fatal(err)
		}
		env := testdb.Seed(t, st, "live")
		ingest := func(tx string) {
			t.Helper()
			w := store.UsageWrite{Batch: models.UsageBatch{TransactionID: tx, Mode: "increment", BodyHash: tx, Response: "{}",
				MetricsCount: 1, ReceivedAt: time.Now()},
				Events: []models.UsageEvent{{ID: tx, AccountID: "a", Product: "p", MetricName: "m", MetricValue: "1",
					MetricResolution: "minute", Metadata: "{}", Timestamp: time.Now()}},
				Rollups: []models.UsageRollup{{AccountID: "a", Product: "p", MetricName: "m", Resolution: "minute",
					PeriodStart: time.Now().UTC().Truncate(time.Minute), Value: "1"}}}
			if _, err := st.WriteUsage(ctx, env, w); err != nil {
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
		waiting, err := st.WaitingUsageEnvironments(ctx, nil, 10)
		if err != nil || len(waiting) != 1 || waiting[0] != env.ID {
			t.Fatalf("waiting environments %v (err %v), want the one with the batch stored after", waiting, err)
		}
		// The consumer's line names the environments it holds already: not listed again.
		if waiting, err = st.WaitingUsageEnvironments(ctx, []string{env.ID}, 10); err != nil || len(waiting) != 0 {
			t.Fatalf("waiting environments but the line's: %v (err %v), want none", waiting, err)
		}
	})
}

// TestDeletedMeterLeavesNoFigures: deleting a meter and purging it removes its kept
// figures and distinct values on both databases, and keeps the other meters' figures.
func TestDeletedMeterLeavesNoFigures(t *testing.T) {
	forBoth(t, "live", func(t *testing.T, ctx context.Context, db seeded) {
		var ids []string
		for _, key := range []string{"gone", "kept"} {
			m, err := meters.Create(ctx, db.st, db.env, meters.Definition{Key: key, MetricName: "calls", Aggregation: models.AggUniqueCount,
				ValueKey: "user"}, time.Now(), idempotency.Reply[meters.Object]{})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ID)
		}
		body := `{"transaction_id":"t1","mode":"increment","event_metrics":[{"account_id":"a","product":"p","metric_name":"calls",` +
			`"metric_value":1,"metric_resolution":"minute","metadata":{"user":"u1"}}]}`
		if _, err := usage.Ingest(ctx, db.st, db.env, []byte(body), time.Now(), idempotency.Reply[usage.StoredReceipt]{}); err != nil {
			t.Fatal(err)
		}
		if _, err := meterstest.Consume(ctx, db.st); err != nil {
			t.Fatal(err)
		}
		if _, err := meters.Delete(ctx, db.st, db.env, "gone", idempotency.Reply[meters.Deleted]{}); err != nil {
			t.Fatal(err)
		}
		// What the deleted meter's MeterPurge workflow does (CONTRACT §21).
		for {
			n, err := db.st.PurgeMeterPage(ctx, ids[0], meters.PurgeRows)
			if err != nil {
				t.Fatal(err)
			}
			if n < meters.PurgeRows {
				break
			}
		}
		for i, want := range []int64{0, 1} {
			// One day figure, series, value and member day per meter: one row of one value.
			for _, table := range []string{"meter_figures WHERE kind = 'day' AND meter_id = ?", "meter_series WHERE meter_id = ?",
				"meter_values WHERE meter_id = ?"} {
				n, err := db.st.TestCount(ctx, `SELECT COUNT(*) FROM `+table, ids[i])
				if err != nil || n != want {
					t.Fatalf("meter %d: %d rows in %s (err %v), want %d", i, n, table, err, want)
				}
			}
		}
		// Member days are keyed by series number: the kept meter's one is all that is left.
		if n, err := db.st.TestCount(ctx, `SELECT COUNT(*) FROM meter_member_days`); err != nil || n != 1 {
			t.Fatalf("%d member days (err %v), want the kept meter's 1", n, err)
		}
	})
}

// TestMigrateMemberDays: the distinct values of unique_count meters kept before members
// were numbered (meter_members, one text key per value and day) migrate to
// meter_member_days, with their series and values numbered, on both databases.
func TestMigrateMemberDays(t *testing.T) {
	forMigratedWithout(t, []int{88}, func(t *testing.T, ctx context.Context, st *store.Store) {
		day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
		for _, r := range []struct {
			meter, acct, groups, member string
			day                         time.Time
			minutes                     string
		}{
			{"m1", "a", `"eu"`, "u1", day, "5,70"},
			{"m1", "a", `"eu"`, "u1", day.AddDate(0, 0, 1), "0"},
			{"m1", "a", `"eu"`, "u2", day, "5"},
			{"m1", "b", `"eu"`, "u1", day, "9"},
			{"m2", "a", `"eu"`, "u1", day, "1439"},
		} {
			if err := st.ExecForTest(ctx, `INSERT INTO meter_members (meter_id, account_id, groups, member, day, minutes) VALUES (?, ?, ?, ?, ?, ?)`,
				r.meter, r.acct, r.groups, r.member, r.day, r.minutes); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := st.ScanForTest(ctx, &got, `SELECT s.meter_id || ' ' || s.account_id || ' ' || s.groups || ' ' || v.value || ' ' || d.day || ' ' || d.minutes
				FROM meter_member_days d JOIN meter_series s ON s.id = d.series JOIN meter_values v ON v.id = d.member AND v.meter_id = s.meter_id
				ORDER BY 1`); err != nil {
			t.Fatal(err)
		}
		d := day.Unix() / 86400
		want := []string{
			fmt.Sprintf(`m1 a "eu" u1 %d 5,70`, d), fmt.Sprintf(`m1 a "eu" u1 %d 0`, d+1), fmt.Sprintf(`m1 a "eu" u2 %d 5`, d),
			fmt.Sprintf(`m1 b "eu" u1 %d 9`, d), fmt.Sprintf(`m2 a "eu" u1 %d 1439`, d),
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("member days after the migration:\n%q\nwant\n%q", got, want)
		}
	})
}

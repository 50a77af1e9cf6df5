package usage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// The rollup rules hold on both databases: increment adds, a set replaces only when its
// ingest sequence is newer than the row's last set, a reused id with another hash is 409.
func TestUsageRollupRulesOnBothDatabases(t *testing.T) {
	ctx := context.Background()
	for name, db := range testdb.Both(t, models.EnvSandbox) {
		t.Run(name, func(t *testing.T) {
			st, env := db.Store, db.Env
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
				if _, err := usage.Save(ctx, st, env, s.w, idempotency.Reply[usage.StoredReceipt]{}); err != nil {
					t.Fatal(err)
				}
				if got := value(); numDiffer(got, s.want) {
					t.Fatalf("after %s: %s, want %s", s.w.Batch.TransactionID, got, s.want)
				}
			}
			res, err := usage.Save(ctx, st, env, usageWrite("t5", "set", "h5", "2", now), idempotency.Reply[usage.StoredReceipt]{})
			if err != nil || !res.Duplicate || res.Batch.Seq == 0 {
				t.Fatalf("replay: %+v %v", res, err)
			}
			var cerr *apperr.ConflictError
			if _, err := usage.Save(ctx, st, env, usageWrite("t5", "set", "other", "3", now), idempotency.Reply[usage.StoredReceipt]{}); !errors.As(err, &cerr) || cerr.Code != "transaction_id_reused" {
				t.Fatalf("reuse: %v", err)
			}
			// A set whose sequence is older than the row's last set does not apply.
			raw := openRaw(t, name, db.URL)
			if err := raw.Exec("UPDATE usage_rollups SET set_seq = 1000000").Error; err != nil {
				t.Fatal(err)
			}
			if _, err := usage.Save(ctx, st, env, usageWrite("t6", "set", "h6", "99", now), idempotency.Reply[usage.StoredReceipt]{}); err != nil {
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

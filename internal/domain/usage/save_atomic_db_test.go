package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// A batch is written whole or not at all on both databases (PostgreSQL writes it in one
// statement): a failing event or rollup leaves no batch, no event and no rollup, and the
// transaction id stays free for a corrected retry.
func TestUsageIngestIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	for name, db := range testdb.Both(t, models.EnvSandbox) {
		t.Run(name, func(t *testing.T) {
			st, env := db.Store, db.Env
			now := time.Now().UTC().Truncate(time.Microsecond)
			dupEvent := usageWrite("t1", "increment", "h1", "1", now)
			dupEvent.Events = append(dupEvent.Events, dupEvent.Events[0]) // same id twice
			dupEvent.Batch.MetricsCount = 2
			bads := []store.UsageWrite{dupEvent}
			if name == "postgres" { // SQLite lets a statement update a row it inserted
				dupRollup := usageWrite("t1", "increment", "h1", "1", now)
				dupRollup.Rollups = append(dupRollup.Rollups, dupRollup.Rollups[0]) // one row twice in a statement
				bads = append(bads, dupRollup)
			}
			for _, bad := range bads {
				if _, err := usage.Save(ctx, st, env, bad, idempotency.Reply[usage.StoredReceipt]{}); err == nil {
					t.Fatal("a failing batch was accepted")
				}
				if b, e, r, err := st.UsageCounts(ctx, env); err != nil || b+e+r != 0 {
					t.Fatalf("after a failed batch: %d batches, %d events, %d rollups (%v)", b, e, r, err)
				}
			}
			res, err := usage.Save(ctx, st, env, usageWrite("t1", "increment", "h1", "1", now), idempotency.Reply[usage.StoredReceipt]{})
			if err != nil || res.Duplicate || res.Batch.Seq == 0 {
				t.Fatalf("retry: %+v %v", res, err)
			}
			if b, e, r, err := st.UsageCounts(ctx, env); err != nil || b != 1 || e != 1 || r != 1 {
				t.Fatalf("counts %d %d %d %v", b, e, r, err)
			}
		})
	}
}

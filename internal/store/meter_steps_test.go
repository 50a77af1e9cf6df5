package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// ingestBatch stores one usage batch of rows of metric "calls" with metadata meta.
func ingestBatch(t *testing.T, st *store.Store, env store.Env, txID string, rows int, meta map[string]any, now time.Time) {
	t.Helper()
	metrics := make([]map[string]any, rows)
	for i := range metrics {
		metrics[i] = map[string]any{"account_id": "acct", "product": "api", "metric_name": "calls", "metric_value": 1,
			"metric_resolution": "minute", "metadata": meta, "timestamp": now.Add(-time.Hour).Unix()}
	}
	body, _ := json.Marshal(map[string]any{"transaction_id": txID, "mode": "increment", "event_metrics": metrics})
	if _, err := usage.Ingest(context.Background(), st, env, body, now, idempotency.Reply[usage.StoredReceipt]{}); err != nil {
		t.Fatal(err)
	}
}

// CONTRACT §21: meter jobs never wait for each other, and a request that a check refuses
// does not wait for the lock at all. While another transaction has updated the
// environment's usage cursor (what a consumer step or a backfill page does), a consumer
// turn runs nothing and returns, a backfill page returns meters.ErrBusy, a meter create
// over the limit is refused at once, and one that must take the lock answers 429
// lock_timeout when the request's lock timeout runs out.
func TestMeterStepsNeverWaitForEachOther(t *testing.T) {
	o := store.DefaultOptions()
	o.LockTimeout = 200 * time.Millisecond
	st, env, _, url := poolsStore(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a bound
	defer cancel()
	svc := &meters.Queries{Store: st}
	now := time.Now().UTC()
	ingestBatch(t, st, env, "old", 3, map[string]any{}, now)
	if _, err := meterstest.Consume(ctx, st.OnJobsPool()); err != nil { // taken before any meter: a backfill's
		t.Fatal(err)
	}
	m, err := meters.Create(ctx, svc.Store, env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggCount}, now, idempotency.Reply[meters.Object]{})
	if err != nil || m.Status != models.MeterBackfilling {
		t.Fatalf("meter %+v, %v", m, err)
	}
	ingestBatch(t, st, env, "new", 2, map[string]any{}, now)

	release := holdLock(t, url, "UPDATE usage_cursors SET writes = writes WHERE environment_id = $1", env.ID)
	ran, _, _, err := meters.Turn(ctx, st.OnJobsPool(), env.ID, meters.DefaultBudget)
	if err != nil || ran {
		t.Fatalf("consumer turn while the environment is held: ran %v, %v; want skipped", ran, err)
	}
	if _, _, err := meters.BackfillPage(ctx, st.OnJobsPool(), m.ID, now); !errors.Is(err, meters.ErrBusy) {
		t.Fatalf("backfill page while the environment is held: %v, want ErrBusy", err)
	}
	_, err = meters.Create(ctx, svc.Store, env, meters.Definition{Key: "other", MetricName: "calls", Aggregation: models.AggSum}, now, idempotency.Reply[meters.Object]{})
	var busy *apperr.BusyError
	if !errors.As(err, &busy) || busy.Code != apperr.CodeLockTimeout {
		t.Fatalf("create while the environment is held: %v, want lock_timeout", err)
	}
	_, err = meters.Create(ctx, svc.Store, env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggSum}, now, idempotency.Reply[meters.Object]{})
	var conflict *apperr.ConflictError
	if !errors.As(err, &conflict) || conflict.Code != meters.CodeMeterKeyTaken {
		t.Fatalf("create of a taken key while the environment is held: %v, want meter_key_taken at once", err)
	}
	release()

	ran, n, _, err := meters.Turn(ctx, st.OnJobsPool(), env.ID, meters.DefaultBudget)
	if err != nil || !ran || n != 2 {
		t.Fatalf("consumer turn once released: ran %v, %d rows, %v; want the new batch's 2 rows", ran, n, err)
	}
	for done := false; !done; {
		if done, _, err = meters.BackfillPage(ctx, st.OnJobsPool(), m.ID, now); err != nil {
			t.Fatal(err)
		}
	}
	page, err := svc.Values(ctx, env, "calls", meters.ValuesQuery{From: now.Add(-48 * time.Hour).Truncate(24 * time.Hour),
		To: now.Add(24 * time.Hour).Truncate(24 * time.Hour), Window: meters.WindowDay}, now)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, v := range page.Data {
		var n int
		fmt.Sscan(v.Value, &n)
		total += n
	}
	if total != 5 {
		t.Fatalf("meter counts %d rows, want 5 (3 backfilled, 2 consumed)", total)
	}
}

// CONTRACT §21: a meter step reads from metadata only the keys its meters use, and of
// those only what can be a dimension; with no key it reads none. Reading stops at the
// byte bound (after a first row) and says rows are left.
func TestUsageRowsReadOnlyTheKeysMetersUse(t *testing.T) {
	forBoth(t, "live", func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		meta := map[string]any{"region": "eu", "plan": map[string]any{"x": 1}, "big": strings.Repeat("x", 2000),
			"other": strings.Repeat("y", 4000), "n": 1.5}
		ingestBatch(t, db.st, db.env, "b1", 10, meta, now)
		var batches []store.Batch
		read := func(keys []string, maxRows, maxBytes int) (rows []store.UsageRow, more bool) {
			t.Helper()
			_, err := db.st.InTx(ctx, db.env, func(mt *store.Tx) error {
				_, _, err := mt.LockUsageCursor(store.Wait)
				if err != nil {
					return err
				}
				if batches, err = mt.WaitingBatches(10); err != nil || len(batches) != 1 {
					return fmt.Errorf("waiting batches %v: %w", batches, err)
				}
				rows, more, err = mt.UsageRows(store.RowQuery{Batches: []int64{batches[0].Seq}, MetricNames: []string{"calls"},
					Keys: keys, MaxRows: maxRows}, maxBytes)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return rows, more
		}
		rows, more := read([]string{"region", "plan", "big", "n"}, 0, 0)
		if len(rows) != 10 || more {
			t.Fatalf("%d rows, more %v; want all 10", len(rows), more)
		}
		var got map[string]any
		if err := json.Unmarshal(rows[0].Metadata, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"region": "eu", "n": 1.5}
		if db.name == "sqlite" { // SQLite reads the whole object; the meters package reads the keys
			want = meta
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("metadata read %v, want %v", got, want)
		}
		if rows, _ := read(nil, 0, 0); string(rows[0].Metadata) != "{}" {
			t.Fatalf("metadata read with no key: %s, want {}", rows[0].Metadata)
		}
		if rows, more := read(nil, 4, 0); len(rows) != 4 || !more {
			t.Fatalf("at most 4 rows: %d, more %v", len(rows), more)
		}
		if rows, more := read([]string{"region"}, 0, 1); len(rows) != 1 || !more {
			t.Fatalf("a 1-byte bound: %d rows, more %v; want the first row and more", len(rows), more)
		}
		after := rows[4].ID
		_, err := db.st.InTx(ctx, db.env, func(mt *store.Tx) error {
			rest, _, err := mt.UsageRows(store.RowQuery{Batches: []int64{batches[0].Seq}, AfterID: after, MetricNames: []string{"calls"}}, 0)
			if err == nil && (len(rest) != 5 || rest[0].ID != rows[5].ID) {
				err = fmt.Errorf("rows after the 5th: %d from %s, want 5 from %s", len(rest), rest[0].ID, rows[5].ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

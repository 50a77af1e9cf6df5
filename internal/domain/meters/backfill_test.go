package meters_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// CONTRACT §18, §21: while a meter backfills, its as_of is the receipt time of the oldest
// batch its backfill has not counted, and it moves with every page; it is read from the
// meter (kept by each page), not from the batches left, so it costs the same as when the
// meter is ready.
func TestAsOfDuringBackfillMovesPageByPage(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		start := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
		var received []time.Time
		for i := range 4 {
			at := start.Add(time.Duration(i) * time.Minute)
			body, _ := json.Marshal(map[string]any{"transaction_id": fmt.Sprint("b", i), "mode": "increment",
				"event_metrics": []map[string]any{{"account_id": "a", "product": "p", "metric_name": "calls", "metric_value": 1,
					"metric_resolution": "minute", "timestamp": at.Unix()}}})
			if err := meterstest.Ingest(ctx, db.Store, db.Env, body, at); err != nil {
				t.Fatal(err)
			}
			received = append(received, at)
		}
		if _, err := meterstest.Consume(ctx, db.Store); err != nil { // taken by no meter: the backfill's
			t.Fatal(err)
		}
		svc := &meters.Queries{Store: db.Store}
		m, err := meterstest.Create(ctx, svc.Store, db.Env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggCount},
			time.Now())
		if err != nil || m.Status != models.MeterBackfilling {
			t.Fatalf("meter %+v, %v", m, err)
		}
		now := time.Now().UTC()
		for page := 0; ; page++ {
			m, err := db.Store.MeterByID(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			asOf, err := db.Store.MeterAsOf(ctx, m, now)
			if err != nil {
				t.Fatal(err)
			}
			want := now
			if page < len(received) {
				want = received[page]
			}
			if !asOf.Equal(want) {
				t.Fatalf("after %d pages as_of is %v, want %v", page, asOf, want)
			}
			if page == len(received) { // every batch counted: the next page finds none
				done, _, err := meters.BackfillPageWithin(ctx, db.Store, m.ID, now, meters.Budget{RowMeters: 1, Bytes: 1 << 20})
				if err != nil || !done {
					t.Fatalf("last page: done %v, %v", done, err)
				}
				if m, err = db.Store.MeterByID(ctx, m.ID); err != nil || m.Status != models.MeterReady {
					t.Fatalf("after the last page the meter is %+v, %v", m, err)
				}
				return
			}
			// One batch a page: a bound of 1 row takes one whole batch.
			if _, _, err := meters.BackfillPageWithin(ctx, db.Store, m.ID, now, meters.Budget{RowMeters: 1, Bytes: 1 << 20}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// CONTRACT §21: a meter created while the consumer has counted part of a batch takes that
// part as its own to backfill; the consumer counts the rest of the batch into it. Every
// row is counted once, into the meters before and the new one.
func TestMeterCreatedBetweenTwoParts(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		svc := &meters.Queries{Store: db.Store}
		now := time.Now().UTC()
		before, err := meterstest.Create(ctx, svc.Store, db.Env, meters.Definition{Key: "before", MetricName: "calls", Aggregation: models.AggSum,
			GroupBy: []string{"region"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		metrics := make([]map[string]any, 10)
		for i := range metrics {
			metrics[i] = map[string]any{"account_id": fmt.Sprint("a", i%3), "product": "p", "metric_name": "calls", "metric_value": i + 1,
				"metric_resolution": "minute", "metadata": map[string]any{"region": fmt.Sprint("r", i%2)}, "timestamp": now.Add(-time.Minute).Unix()}
		}
		body, _ := json.Marshal(map[string]any{"transaction_id": "big", "mode": "increment", "event_metrics": metrics})
		if err := meterstest.Ingest(ctx, db.Store, db.Env, body, now); err != nil {
			t.Fatal(err)
		}
		// One meter, 4 row-meters: the 10-row batch is counted 4 rows at a time.
		ran, n, more, err := meters.Turn(ctx, db.Store, db.Env.ID, meters.Budget{RowMeters: 4, Bytes: 1 << 20})
		if err != nil || !ran || n != 4 || !more {
			t.Fatalf("first part: ran %v, %d rows, more %v, %v", ran, n, more, err)
		}
		after, err := meterstest.Create(ctx, svc.Store, db.Env, meters.Definition{Key: "after", MetricName: "calls", Aggregation: models.AggCount},
			now)
		if err != nil || after.Status != models.MeterBackfilling || after.BackfillPartSeq == 0 {
			t.Fatalf("meter created between two parts: %+v, %v; want its part to backfill", after, err)
		}
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		if err := meterstest.Backfill(ctx, db.Store, after.ID, now); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Store.MeterRows(ctx, db.Env.ID, "calls")
		if err != nil || len(rows) != 10 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		for _, m := range []models.Meter{before, after} {
			m, err := meters.Get(ctx, svc.Store, db.Env, m.Key)
			if err != nil || m.Status != models.MeterReady {
				t.Fatalf("%+v, %v", m, err)
			}
			meterstest.Check(t, meterstest.ServiceValues(svc, db.Env), m, rows, now, time.Now())
		}
	})
}

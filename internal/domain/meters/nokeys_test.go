package meters_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// An environment whose meters read no metadata key (a count and a sum without group_by)
// is consumed and backfilled like any other: the usage-row read projects no key then
// (CONTRACT §21), and on PostgreSQL it once failed every step with "could not determine
// data type of parameter $4", leaving the environment's as_of stopped.
func TestMetersReadingNoMetadataKey(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		svc := &meters.Queries{Store: db.Store}
		now := time.Now().UTC()
		r := rand.New(rand.NewPCG(4, 2))
		ingestSome := func(from int) {
			for b := from; b < from+5; b++ {
				if err := meterstest.Ingest(ctx, db.Store, db.Env, randomBatch(r, fmt.Sprintf("nokey-%d", b), now), now); err != nil {
					t.Fatal(err)
				}
			}
		}
		ingestSome(0) // before the meters: their backfill counts these
		var ms []models.Meter
		for _, d := range []meters.Definition{
			{Key: "calls", MetricName: "calls", Aggregation: models.AggCount},
			{Key: "calls-sum", MetricName: "calls", Aggregation: models.AggSum, Product: "api"},
		} {
			m, err := meterstest.Create(ctx, svc.Store, db.Env, d, now)
			if err != nil {
				t.Fatal(err)
			}
			if err := meterstest.Backfill(ctx, db.Store, m.ID, time.Now()); err != nil {
				t.Fatalf("backfill %s: %v", m.Key, err)
			}
			ms = append(ms, m)
		}
		ingestSome(5) // after: the consumer counts these
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Store.MeterRows(ctx, db.Env.ID, "calls")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			m, err := meters.Get(ctx, svc.Store, db.Env, m.Key)
			if err != nil || m.Status != models.MeterReady {
				t.Fatalf("meter %s: %+v, %v", m.Key, m, err)
			}
			meterstest.Check(t, meterstest.ServiceValues(svc, db.Env), m, rows, now, now)
		}
	})
}

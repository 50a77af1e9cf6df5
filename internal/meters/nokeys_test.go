package meters_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/revops/revops/internal/meters"
	"github.com/revops/revops/internal/meters/meterstest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/usage"
	"github.com/revops/revops/models"
)

// TestMetersReadingNoMetadataKey: an environment whose meters read no metadata key (no
// group_by, no value_key) is counted like any other. The consumer reads metadata only for
// the keys its meters use (CONTRACT §21); with none, the row query must still be valid,
// or the environment's batches would wait forever.
func TestMetersReadingNoMetadataKey(t *testing.T) {
	for name, db := range bothDatabases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			svc := &meters.Service{Store: db.st}
			now := time.Now().UTC()
			defs := []meters.Definition{{Key: "calls-count", MetricName: "calls", Aggregation: models.AggCount},
				{Key: "calls-sum", MetricName: "calls", Aggregation: models.AggSum}}
			for _, d := range defs {
				if _, err := svc.Create(ctx, db.env, d, now, store.Reply[models.Meter]{}); err != nil {
					t.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(5, 7))
			for b := range 4 {
				if _, err := usage.Ingest(ctx, db.st, db.env, randomBatch(r, fmt.Sprintf("nokeys-%d", b), now), now, store.Reply[store.UsageResult]{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := meters.Consume(ctx, db.st); err != nil {
				t.Fatalf("consume: %v", err)
			}
			rows, err := db.st.MeterRows(ctx, db.env.ID, "calls")
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range defs {
				m, err := svc.Get(ctx, db.env, d.Key)
				if err != nil {
					t.Fatal(err)
				}
				meterstest.Check(t, meterstest.ServiceValues(svc, db.env), m, rows, now, time.Now())
			}
		})
	}
}

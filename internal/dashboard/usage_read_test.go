package dashboard

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// TestMeterDaysBound: a chart reads its figures page by page up to its bound, and says
// when figures remained unread.
func TestMeterDaysBound(t *testing.T) {
	ctx := context.Background()
	st := testdb.Open(t, filepath.Join(t.TempDir(), "revops.db"))
	org, err := orgs.CreateWithHash(ctx, st, "Acme", "a@example.com", "x")
	if err != nil {
		t.Fatal(err)
	}
	env, err := st.Environment(ctx, org.ID, "live")
	if err != nil {
		t.Fatal(err)
	}
	h := &handler{meters: &meters.Queries{Store: st}}
	m, err := meters.Create(ctx, st, env, meters.Definition{Key: "calls", MetricName: "api_calls", Aggregation: models.AggSum}, time.Now(), idempotency.Reply[meters.Object]{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range 5 { // five accounts, one figure each today
		body := fmt.Sprintf(`{"transaction_id":"t%d","mode":"increment","event_metrics":[{"account_id":"acct_%d","product":"api",`+
			`"metric_name":"api_calls","metric_value":1,"metric_resolution":"day","timestamp":%q}]}`, i, i, now.Format(time.RFC3339))
		if _, err := usage.Ingest(ctx, st, env, []byte(body), now, idempotency.Reply[usage.StoredReceipt]{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := meterstest.Consume(ctx, st); err != nil {
		t.Fatal(err)
	}
	days := dayAxis(now, usageChartDays)
	for _, tc := range []struct {
		bound, rows int
		partial     bool
	}{{2, 2, true}, {3, 3, true}, {4, 4, true}, {5, 5, false}, {usageMaxRows, 5, false}} {
		rows, asOf, partial, err := h.meterDays(ctx, env, m, days, now, tc.bound)
		if err != nil || len(rows) != tc.rows || partial != tc.partial || asOf.IsZero() {
			t.Errorf("bound %d: %d rows, partial %v, as_of %v, %v; want %d rows, partial %v", tc.bound, len(rows), partial, asOf, err, tc.rows, tc.partial)
		}
	}
}

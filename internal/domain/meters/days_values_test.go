package meters_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// TestMonthValuesOverTheBudget (PostgreSQL and SQLite): months and weeks whose days hold
// many times a page's read budget (lowered to 300 figures, as 50,000 would be with real
// data) are answered in pages, never refused: every page reads at most the budget and
// builds at most limit+1 rows, and the pages together are the reference computed from the
// raw rows (CONTRACT §18, §21), with group_by none, a leading key, all keys, a key that
// does not lead (each account's week within the budget), and a filter.
func TestMonthValuesOverTheBudget(t *testing.T) {
	const budget = 300
	meters.SetReadBudget(t, budget)
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		svc := &meters.Queries{Store: db.Store}
		m, err := meterstest.Create(ctx, svc.Store, db.Env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggSum,
			GroupBy: []string{"region", "plan"}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		for d := range 34 { // 34 days back: two months, five or six weeks
			var metrics []map[string]any
			for a := range 30 {
				for p := range 2 { // two plans of each account's region every day
					metrics = append(metrics, map[string]any{"account_id": fmt.Sprintf("acct_%02d", a), "metric_name": "calls", "product": "api",
						"metric_value": json.RawMessage(fmt.Sprintf("%d.%02d", a+d, p+1)), "metric_resolution": "minute",
						"metadata":  map[string]any{"region": []string{"eu", "us", "ap"}[a%3], "plan": fmt.Sprintf("p%d", (a+p+d)%3)},
						"timestamp": now.AddDate(0, 0, -d).Add(-time.Duration(a) * time.Minute).Unix()})
				}
			}
			body, _ := json.Marshal(map[string]any{"transaction_id": fmt.Sprintf("day-%d", d), "mode": "increment", "event_metrics": metrics})
			if err := meterstest.Ingest(ctx, db.Store, db.Env, body, now); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Store.MeterRows(ctx, db.Env.ID, "calls")
		if err != nil {
			t.Fatal(err)
		}
		from := period.Start(now.AddDate(0, 0, -40), meters.WindowMonth)
		to := period.Start(now, meters.WindowMonth).AddDate(0, 1, 0)
		for _, c := range []struct {
			window  string
			groupBy []string
			filters map[string]string
		}{
			{meters.WindowMonth, nil, nil},
			{meters.WindowMonth, []string{"region"}, nil},
			{meters.WindowMonth, []string{"region", "plan"}, nil},
			{meters.WindowMonth, nil, map[string]string{"region": "us"}},
			{meters.WindowWeek, []string{"plan"}, nil},
			{meters.WindowWeek, nil, nil},
		} {
			f, tt := from, to
			if c.window == meters.WindowWeek {
				f, tt = period.Start(from, meters.WindowWeek), period.Start(to, meters.WindowWeek)
			}
			want, err := meters.Reference(m, rows, c.window, f, tt, c.groupBy, c.filters)
			if err != nil {
				t.Fatal(err)
			}
			q := meters.ValuesQuery{From: f, To: tt, Window: c.window, GroupBy: c.groupBy, Filters: c.filters, Limit: 40}
			var got []meters.Value
			pages, short := 0, 0
			for ; ; pages++ {
				p, err := svc.Values(ctx, db.Env, "calls", q, time.Now())
				if err != nil {
					t.Fatalf("%s %v %v, page %d: %v", c.window, c.groupBy, c.filters, pages, err)
				}
				if p.Cost.Read > budget || p.Cost.Built > q.Limit+1 {
					t.Fatalf("%s %v: page %d read %d figures and built %d rows; at most %d and %d", c.window, c.groupBy, pages, p.Cost.Read, p.Cost.Built, budget, q.Limit+1)
				}
				if p.NextPage != "" && len(p.Data) < q.Limit {
					short++ // ended by the budget
				}
				got = append(got, p.Data...)
				if p.NextPage == "" {
					break
				}
				q.Page = p.NextPage
			}
			if g, w := valueLines(got, c.groupBy), valueLines(want, c.groupBy); fmt.Sprint(g) != fmt.Sprint(w) {
				compareLines(t, fmt.Sprintf("%s %v %v", c.window, c.groupBy, c.filters), g, w)
			}
			t.Logf("%s group_by %v filter %v: %d values over %d pages (%d ended by the budget)", c.window, c.groupBy, c.filters, len(got), pages+1, short)
			if c.window == meters.WindowMonth && c.filters == nil && short == 0 {
				t.Fatalf("%s %v: no page was ended by the budget: the test proves less than it says", c.window, c.groupBy)
			}
		}
	})
}

func valueLines(vs []meters.Value, groupBy []string) []string {
	var out []string
	for _, v := range vs {
		line := fmt.Sprintf("%s %s %s", v.WindowStart.UTC().Format(time.RFC3339), v.AccountID, v.Value)
		for _, k := range groupBy {
			if g := v.Group[k]; g != nil {
				line += " " + k + "=" + *g
			}
		}
		out = append(out, line)
	}
	return out
}

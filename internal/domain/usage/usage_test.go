package usage

import (
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/decimal"
)

func TestRollupsAggregateInBatch(t *testing.T) {
	now := testNow
	mk := func(acct, res, val string, at time.Time) Metric {
		d, err := decimal.Parse(val)
		if err != nil {
			t.Fatal(err)
		}
		return Metric{AccountID: acct, Product: "p", MetricName: "m", Resolution: res, Value: d, Timestamp: at}
	}
	metrics := []Metric{
		mk("b", Hour, "0.1", now),
		mk("a", Hour, "0.2", now),
		mk("b", Hour, "0.2", now.Add(time.Minute)),
		mk("b", Hour, "5", now.Add(time.Hour)),
		mk("b", Day, "1", now),
	}
	tests := []struct {
		mode string
		want []string
	}{
		{ModeIncrement, []string{"a hour 15:00 0.2", "b day 00:00 1", "b hour 15:00 0.3", "b hour 16:00 5"}},
		{ModeSet, []string{"a hour 15:00 0.2", "b day 00:00 1", "b hour 15:00 0.2", "b hour 16:00 5"}},
	}
	for _, tt := range tests {
		got := Rollups(Batch{Mode: tt.mode, Metrics: metrics})
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %d rollups, want %d", tt.mode, len(got), len(tt.want))
		}
		for i, r := range got {
			s := r.AccountID + " " + r.Resolution + " " + r.PeriodStart.Format("15:04") + " " + r.Value.String()
			if s != tt.want[i] {
				t.Errorf("%s: rollup %d = %q, want %q", tt.mode, i, s, tt.want[i])
			}
		}
	}
}

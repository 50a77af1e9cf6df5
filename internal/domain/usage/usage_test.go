package usage

import (
	"testing"
	"time"
)

func TestRollupsAggregateInBatch(t *testing.T) {
	now := testNow
	mk := func(acct, res, val string, at time.Time) Metric {
		d, err := ParseDecimal(val)
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

func TestDecimal(t *testing.T) {
	tests := []struct{ a, b, sum string }{
		{"0.1", "0.2", "0.3"},
		{"1.50", "-1.5", "0"},
		{"-0", "0.000", "0"},
		{"1e2", "0.01", "100.01"},
		{"-12.345", "2.345", "-10"},
		{"99999999999999999999999999999999.9", "0.1", "100000000000000000000000000000000"},
	}
	for _, tt := range tests {
		a, err1 := ParseDecimal(tt.a)
		b, err2 := ParseDecimal(tt.b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := a.Add(&b); got.String() != tt.sum {
			t.Errorf("%s + %s = %s, want %s", tt.a, tt.b, got.String(), tt.sum)
		}
	}
	for in, want := range map[string]string{"10.500": "10.5", "-0.0": "0", "7": "7", "abc": "abc", "1.0e+20": "100000000000000000000"} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%s) = %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"01", "1.", ".5", "+1", "1e", "NaN", "Infinity", "-", "0x10", " 1"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) accepted", bad)
		}
	}
}

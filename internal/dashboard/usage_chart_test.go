package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/models"
)

// TestBuildSeries: the five largest groups over the days stay themselves, every other one
// is summed exactly, day by day, into one series named for what it is.
func TestBuildSeries(t *testing.T) {
	now := time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC)
	days := dayAxis(now, usageChartDays)
	eu, us := "eu", "us"
	row := func(day int, acct string, region *string, v string) meters.Value {
		start := days[0].AddDate(0, 0, day)
		return meters.Value{WindowStart: start, WindowEnd: start.AddDate(0, 0, 1), AccountID: acct,
			Group: map[string]*string{"region": region}, Value: v}
	}
	rows := []meters.Value{
		row(29, "acct_1", &eu, "100"), row(0, "acct_1", &eu, "0.5"), // total 100.5
		row(29, "acct_2", &eu, "90"),
		row(28, "acct_3", &us, "80"),
		row(27, "acct_4", nil, "70"),
		row(29, "acct_1", &us, "60"),
		// The rest: 0.1 + 0.2 on day 29 (exactly 0.3), 5 on day 3, 2 groups.
		row(29, "acct_6", &eu, "0.1"), row(3, "acct_6", &eu, "5"),
		row(29, "acct_7", &eu, "0.2"),
		row(30, "acct_8", &eu, "1000"),        // tomorrow: not a day of the chart
		row(5, "acct_9", &eu, "not a number"), // not a figure
	}
	series, bad := buildSeries(rows, models.AggSum, []string{"region"}, days)
	if bad != 2 {
		t.Errorf("%d figures left out, want 2", bad)
	}
	var got []string
	for _, s := range series {
		got = append(got, fmt.Sprintf("%s=%s", s.Label, decimalText(s.Total)))
	}
	want := "acct_1 · region=eu=100.5 acct_2 · region=eu=90 acct_3 · region=us=80 acct_4 · region=(none)=70 " +
		"acct_1 · region=us=60 the rest (2 other groups)=5.3"
	if strings.Join(got, " ") != want {
		t.Fatalf("series\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	rest := series[5]
	if !rest.Rest || rest.Groups != 2 || decimalText(rest.Daily[29]) != "0.3" || decimalText(rest.Daily[3]) != "5" || decimalText(rest.Daily[0]) != "0" {
		t.Fatalf("the rest: %+v, day 29 %s, day 3 %s", rest, decimalText(rest.Daily[29]), decimalText(rest.Daily[3]))
	}

	// Six groups: the sixth is drawn as itself, not as a rest of one.
	six, _ := buildSeries(rows[:6], models.AggSum, []string{"region"}, days)
	if len(six) != 5 || six[4].Rest {
		// rows[:6] holds five groups (acct_1 eu has two rows).
		t.Fatalf("five groups gave %d series", len(six))
	}
	six, _ = buildSeries(rows[:7], models.AggSum, []string{"region"}, days)
	if len(six) != 6 || six[5].Rest || six[5].Label != "acct_6 · region=eu" {
		t.Fatalf("six groups: %+v", six[5])
	}

	// unique_count: the rest is a sum of distinct counts, and says so.
	uc, _ := buildSeries(rows[:9], models.AggUniqueCount, []string{"region"}, days)
	if l := uc[5].Label; l != "the rest (2 other groups, sum of their distinct counts)" {
		t.Fatalf("unique_count's rest is labelled %q", l)
	}
}

// TestDrawUsage: columns stack to the axis' round top without gaps, the axis reads round
// numbers, and the legend carries the exact totals.
func TestDrawUsage(t *testing.T) {
	now := time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC)
	days := dayAxis(now, usageChartDays)
	row := func(day int, acct, v string) meters.Value {
		return meters.Value{WindowStart: days[day], AccountID: acct, Value: v}
	}
	series, _ := buildSeries([]meters.Value{row(29, "a", "700"), row(29, "b", "170"), row(10, "b", "0.001")}, models.AggSum, nil, days)
	ch := drawUsage(series, days, models.AggSum)
	var ticks []string
	for _, tk := range ch.Ticks {
		ticks = append(ticks, fmt.Sprintf("%s@%d", tk.Label, tk.Y))
	}
	// peak 870.001 → step 500 (870/4 = 217.5 → 500), top 1000.
	if got := strings.Join(ticks, " "); got != "0@158 500@83 1k@8" {
		t.Fatalf("ticks %s", got)
	}
	today := ch.Days[29]
	if len(today.Segments) != 2 || today.Label != "Nov 24" || ch.Days[22].Label != "Nov 17" || ch.Days[21].Label != "" {
		t.Fatalf("today %+v, labels %q %q", today, ch.Days[22].Label, ch.Days[21].Label)
	}
	a, b := today.Segments[0], today.Segments[1]
	// 700 of 1000 → 105 of 150 units; 870 → 131 (130.5 rounds up).
	if a.H != 105 || a.Y != 158-105 || b.Y+b.H != a.Y || b.H != 131-105 || a.Value != "700" || b.Class != "s1" {
		t.Fatalf("segments %+v %+v", a, b)
	}
	if tiny := ch.Days[10].Segments; len(tiny) != 1 || tiny[0].H != 1 || tiny[0].Value != "0.001" {
		t.Fatalf("a tiny figure: %+v", tiny)
	}
	if ch.Legend[0].Total != "700" || ch.Legend[1].Total != "170.001" || !ch.Additive {
		t.Fatalf("legend %+v", ch.Legend)
	}
}

func TestAxisScaleAndLabels(t *testing.T) {
	for _, tc := range []struct {
		peak      float64
		top, step float64
	}{{0, 1, 1}, {1, 1, 0.5}, {3, 3, 1}, {7, 8, 2}, {870, 1000, 500}, {0.003, 0.003, 0.001}, {12345, 15000, 5000}} {
		top, step := axisScale(tc.peak)
		if fmt.Sprint(top) != fmt.Sprint(tc.top) || fmt.Sprint(step) != fmt.Sprint(tc.step) {
			t.Errorf("axisScale(%v) = %v, %v; want %v, %v", tc.peak, top, step, tc.top, tc.step)
		}
	}
	for v, want := range map[float64]string{0: "0", 0.1 + 0.2: "0.3", 1500: "1.5k", 2e6: "2M", 250: "250", 3e9: "3B"} {
		if got := tickLabel(v); got != want {
			t.Errorf("tickLabel(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestGroupDigits(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000", "27996.25": "27,996.25", "-1234567": "-1,234,567", "0.0001": "0.0001"} {
		if got := groupDigits(in); got != want {
			t.Errorf("groupDigits(%s) = %s, want %s", in, got, want)
		}
	}
}

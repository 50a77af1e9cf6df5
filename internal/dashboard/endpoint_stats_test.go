package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// buckets puts counts in buckets by index: "3:5" is five attempts in the 100 ms bucket;
// index 11 is the open one above 30 s.
func buckets(spec ...string) []int64 {
	b := make([]int64, models.LatencyBuckets)
	for _, s := range spec {
		var i, n int64
		fmt.Sscanf(s, "%d:%d", &i, &n)
		b[i] += n
	}
	return b
}

// An endpoint's figures from its hourly rollups: the 24 h success rate and p95 over the
// 24 hourly rollups ending with the current hour's (as success_rate_24h counts), and the
// week's attempts by day and outcome, timeouts apart from the other failures.
func TestFiguresOf(t *testing.T) {
	now := time.Date(2026, 11, 23, 13, 30, 0, 0, time.UTC) // a Monday
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, time.UTC) }
	hours := []hourStats{
		{Start: at(23, 13), Attempts: 10, Succeeded: 8, Failed: 2, Timeouts: 1, Buckets: buckets("3:5", "4:3", "5:1", "11:1")},
		{Start: at(22, 14), Attempts: 10, Succeeded: 10, Buckets: buckets("0:10")},         // the 24 h's first hour
		{Start: at(22, 13), Attempts: 4, Failed: 4, Timeouts: 4, Buckets: buckets("11:4")}, // the week's, not the 24 h's
		{Start: at(16, 23), Attempts: 99, Succeeded: 99, Buckets: buckets("0:99")},         // before the week
	}
	f := figuresOf(hours, now)
	// 24 h: 18 of 20 succeeded; the 19th of 20 durations is in the 500 ms bucket.
	if f.Rate24h != "90 %" || f.P95 != "≤ 500 ms" || f.Attempts != 20 {
		t.Errorf("24 h: rate %q, p95 %q, %d attempts; want 90 %%, ≤ 500 ms, 20", f.Rate24h, f.P95, f.Attempts)
	}
	var days, heights []string
	for _, d := range f.Chart.Days {
		var n, h []string
		for _, b := range d.Bars {
			n, h = append(n, fmt.Sprint(b.N)), append(h, fmt.Sprint(b.H))
			if b.Y+b.H != chartBarsTop+chartBarsH || b.X+b.W > f.Chart.Width {
				t.Errorf("bar %+v leaves the chart's baseline or width", b)
			}
		}
		days, heights = append(days, strings.Join(n, "/")), append(heights, strings.Join(h, "/"))
	}
	if got, want := strings.Join(days, " "), "0/0/0 0/0/0 0/0/0 0/0/0 0/0/0 10/0/4 8/1/1"; got != want {
		t.Errorf("succeeded/failed/timed out by day %s, want %s", got, want)
	}
	if got, want := strings.Join(heights, " "), "0/0/0 0/0/0 0/0/0 0/0/0 0/0/0 40/0/16 32/4/4"; got != want {
		t.Errorf("heights %s, want %s", got, want)
	}
	if c := f.Chart; c.Succeeded != 18 || c.Failed != 6 || c.Timeouts != 5 || c.Days[6].Date != "2026-11-23" || c.Days[0].Date != "2026-11-17" {
		t.Errorf("week: %d succeeded, %d failed, %d timed out, %s … %s", c.Succeeded, c.Failed, c.Timeouts, c.Days[0].Date, c.Days[6].Date)
	}

	if f := figuresOf(nil, now); f.Rate24h != "—" || f.P95 != "—" || len(f.Chart.Days) != chartDays {
		t.Errorf("no attempt: rate %q, p95 %q, %d days", f.Rate24h, f.P95, len(f.Chart.Days))
	}
	// Every duration above the last bound reports that bound; one fast of a hundred does
	// not move the p95.
	for _, tc := range []struct {
		b    []int64
		want int64
	}{
		{buckets("11:3"), 30000}, {buckets("0:1", "6:99"), 1000}, {buckets("0:95", "8:5"), 10}, {buckets("0:94", "8:6"), 5000},
	} {
		if got := webhook.QuantileMS(tc.b, 95); got != tc.want {
			t.Errorf("p95 of %v: %d, want %d", tc.b, got, tc.want)
		}
	}
}

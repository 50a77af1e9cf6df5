package dashboard

import (
	"fmt"
	"math"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// chartDays is how many days each endpoint's chart shows, today included.
const chartDays = 7

// Geometry of the chart, in SVG user units: per day a green bar (delivered) and a red bar
// (failed) side by side, scaled to the busiest bar of the week, a day label below.
const (
	chartBarWidth = 9
	chartDayWidth = 2*chartBarWidth + 8
	chartBarsTop  = 2
	chartBarsH    = 40
	chartHeight   = chartBarsTop + chartBarsH + 14
	chartWidth    = chartDays * chartDayWidth
)

// chartBar is one bar as the template draws it.
type chartBar struct {
	X, Y, W, H int
	N          int
}

// chartDay is one day of an endpoint's chart.
type chartDay struct {
	Label     string // "Mon"
	Date      string // "2026-11-23", for the bars' titles
	Delivered chartBar
	Failed    chartBar
	LabelX    int
}

// endpointChart is the last chartDays days of one endpoint: the bars, the totals and
// the success rate (delivered of delivered+failed; "—" with neither).
type endpointChart struct {
	Days             []chartDay
	Delivered        int
	Failed           int
	Rate             string
	Width, Height    int
	LabelY, BaseLine int
}

// buildCharts turns the store's counts into one chart per endpoint id; an endpoint
// without deliveries in the window gets an empty chart too.
func buildCharts(rows []store.EndpointDeliveryCount, endpointIDs []string, now time.Time, days int) map[string]endpointChart {
	counts := map[string][][2]int{} // endpoint → day → {delivered, failed}
	for _, id := range endpointIDs {
		counts[id] = make([][2]int, days)
	}
	for _, r := range rows {
		c, ok := counts[r.EndpointID]
		if !ok || r.Day < 0 || r.Day >= days {
			continue
		}
		switch r.Status {
		case models.EventDelivered:
			c[r.Day][0] += r.N
		case models.EventFailed:
			c[r.Day][1] += r.N
		}
	}
	axis := dayAxis(now, days)
	out := make(map[string]endpointChart, len(counts))
	for id, c := range counts {
		out[id] = drawChart(c, axis)
	}
	return out
}

// dayAxis is the n UTC days a chart covers, oldest first, the last one now's: the
// Webhooks and Usage charts count by UTC day, as the store and the meters do.
func dayAxis(now time.Time, n int) []time.Time {
	first := store.DayStart(now).AddDate(0, 0, -(n - 1))
	days := make([]time.Time, n)
	for i := range days {
		days[i] = first.AddDate(0, 0, i)
	}
	return days
}

// barHeight scales v to whole units of a bar full units high for peak (the chart's
// largest value, or its axis' top). A positive value is at least 1 unit high so that it
// stays visible beside a much larger one; zero and negative values are not drawn.
func barHeight(v, peak float64, full int) int {
	if v <= 0 || peak <= 0 {
		return 0
	}
	return max(1, int(math.Round(v*float64(full)/peak)))
}

// drawChart lays out one endpoint's bars over axis (one day per count): heights are
// proportional to the week's largest count.
func drawChart(c [][2]int, axis []time.Time) endpointChart {
	ch := endpointChart{Width: len(c) * chartDayWidth, Height: chartHeight,
		LabelY: chartHeight - 2, BaseLine: chartBarsTop + chartBarsH}
	peak := 0
	for _, d := range c {
		ch.Delivered += d[0]
		ch.Failed += d[1]
		peak = max(peak, d[0], d[1])
	}
	bar := func(x, n int) chartBar {
		h := barHeight(float64(n), float64(peak), chartBarsH)
		return chartBar{X: x, Y: chartBarsTop + chartBarsH - h, W: chartBarWidth, H: h, N: n}
	}
	for i, d := range c {
		day := axis[i]
		x := i*chartDayWidth + 3
		ch.Days = append(ch.Days, chartDay{
			Label: day.Format("Mon"), Date: day.Format("2006-01-02"),
			Delivered: bar(x, d[0]), Failed: bar(x+chartBarWidth+1, d[1]),
			LabelX: i*chartDayWidth + chartDayWidth/2,
		})
	}
	ch.Rate = successRate(ch.Delivered, ch.Failed)
	return ch
}

// successRate is delivered/(delivered+failed) as a percentage with at most one decimal,
// never rounded up to 100 % while anything failed.
func successRate(delivered, failed int) string {
	total := delivered + failed
	if total == 0 {
		return "—"
	}
	tenths := delivered * 1000 / total // floor: 999 of 1000 reads 99.9 %, not 100 %
	if tenths%10 == 0 {
		return fmt.Sprintf("%d %%", tenths/10)
	}
	return fmt.Sprintf("%d.%d %%", tenths/10, tenths%10)
}

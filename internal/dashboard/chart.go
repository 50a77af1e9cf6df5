package dashboard

import (
	"fmt"
	"math"
	"time"

	"github.com/revops/revops/internal/store"
)

// chartDays is how many days each endpoint's chart shows, today included.
const chartDays = 7

// Geometry of the endpoints' chart, in SVG user units: per day three bars side by side
// (succeeded, failed, timed out), scaled to the busiest bar of the week, a day label below.
const (
	chartBarWidth = 7
	chartDayWidth = 3*(chartBarWidth+1) + 5
	chartBarsTop  = 2
	chartBarsH    = 40
	chartHeight   = chartBarsTop + chartBarsH + 14
)

// chartBar is one bar as the template draws it.
type chartBar struct {
	X, Y, W, H int
	N          int
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

package dashboard

import (
	"fmt"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// The Webhooks page's figures of an endpoint (CONTRACT §23), from its hourly attempt
// rollups (the stats of GET /v1/webhook_endpoints/{id}/stats): the 24 h success rate and
// p95 duration, and a chartDays chart of attempts by outcome.

// hourStats is one UTC hour of an endpoint's attempt rollups: the attempts sent, by
// outcome (Timeouts ⊆ Failed), and by latency bucket.
type hourStats struct {
	Start                                 time.Time
	Attempts, Succeeded, Failed, Timeouts int64
	Buckets                               []int64 // one per models.LatencyBucketsMS bound, then the open bucket above the last
}

// Outcomes of the chart, in the order of its bars.
var outcomes = []struct{ Class, Name string }{
	{"bar-succeeded", "succeeded"}, {"bar-failed", "failed"}, {"bar-timeout", "timed out"},
}

// outcomeBar is one bar of the outcome chart.
type outcomeBar struct {
	chartBar
	Class, Name string
}

// outcomeDay is one day of the outcome chart.
type outcomeDay struct {
	Label, Date string
	Bars        []outcomeBar // succeeded, failed other than by timeout, timed out
	LabelX      int
}

// outcomeChart is an endpoint's attempts of the last chartDays UTC days by outcome.
type outcomeChart struct {
	Days                            []outcomeDay
	Succeeded, Failed, Timeouts     int64 // over the days; Timeouts ⊆ Failed
	Width, Height, LabelY, BaseLine int
}

// endpointFigures are what the Webhooks page shows of an endpoint's stats.
type endpointFigures struct {
	Rate24h  string // "99.9 %"; "—" without an attempt in the 24 hours
	P95      string // "≤ 250 ms": the upper bound of the bucket holding the 95th percentile; "—"
	Attempts int64  // in the 24 hours
	Chart    outcomeChart
}

// figuresOf sums an endpoint's hours (any order; those outside the chart's days are
// left out) into its figures at now: the 24 h ones over the hours the health object's
// success_rate_24h counts (store.SuccessRateSince), p95 as the stats API reports it.
func figuresOf(hours []hourStats, now time.Time) endpointFigures {
	axis := dayAxis(now, chartDays)
	counts := make([][3]int64, chartDays) // per day: succeeded, failed but not timed out, timed out
	since := store.SuccessRateSince(now)
	buckets := make([]int64, models.LatencyBuckets)
	var f endpointFigures
	var succeeded24 int64
	for _, h := range hours {
		day := int(h.Start.UTC().Sub(axis[0]) / (24 * time.Hour))
		if h.Start.Before(axis[0]) || day >= chartDays {
			continue
		}
		counts[day][0] += h.Succeeded
		counts[day][1] += h.Failed - h.Timeouts
		counts[day][2] += h.Timeouts
		if !h.Start.Before(since) {
			f.Attempts += h.Attempts
			succeeded24 += h.Succeeded
			for i := range min(len(buckets), len(h.Buckets)) {
				buckets[i] += h.Buckets[i]
			}
		}
	}
	f.Rate24h, f.P95 = "—", "—"
	if f.Attempts > 0 {
		f.Rate24h = successRate(int(succeeded24), int(f.Attempts-succeeded24))
		f.P95 = "≤ " + formatMS(webhook.QuantileMS(buckets, 95))
	}
	f.Chart = drawOutcomes(counts, axis)
	return f
}

func formatMS(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%d ms", ms)
	}
	return fmt.Sprintf("%g s", float64(ms)/1000)
}

// drawOutcomes lays out three bars a day over axis, scaled to the week's largest count.
func drawOutcomes(c [][3]int64, axis []time.Time) outcomeChart {
	ch := outcomeChart{Width: len(c) * chartDayWidth, Height: chartHeight, LabelY: chartHeight - 2, BaseLine: chartBarsTop + chartBarsH}
	var peak int64
	for _, d := range c {
		ch.Succeeded += d[0]
		ch.Failed += d[1] + d[2]
		ch.Timeouts += d[2]
		peak = max(peak, d[0], d[1], d[2])
	}
	for i, d := range c {
		day := outcomeDay{Label: axis[i].Format("Mon"), Date: axis[i].Format("2006-01-02"), LabelX: i*chartDayWidth + chartDayWidth/2}
		for j, n := range d {
			h := barHeight(float64(n), float64(peak), chartBarsH)
			x := i*chartDayWidth + 3 + j*(chartBarWidth+1)
			day.Bars = append(day.Bars, outcomeBar{chartBar: chartBar{X: x, Y: chartBarsTop + chartBarsH - h, W: chartBarWidth, H: h, N: int(n)},
				Class: outcomes[j].Class, Name: outcomes[j].Name})
		}
		ch.Days = append(ch.Days, day)
	}
	return ch
}

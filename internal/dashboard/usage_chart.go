package dashboard

import (
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/revops/revops/models"
)

// usageChartDays is how many days each meter's chart shows, today included (CONTRACT §18).
const usageChartDays = 30

// Geometry of a meter's chart, in SVG user units: a margin on the left for the axis'
// labels, then per day a column stacking the series' figures (the largest group at the
// bottom, the rest on top), scaled to the axis' top; a date below every seventh day,
// today's included.
const (
	usageAxisW   = 48
	usageDayW    = 22
	usageBarW    = 16
	usagePlotTop = 8
	usagePlotH   = 150
	usageHeight  = usagePlotTop + usagePlotH + 18
	usageWidth   = usageAxisW + usageChartDays*usageDayW + 4
	// usageSteps is about how many steps the axis has between 0 and its top.
	usageSteps = 4
)

// usageChart is one meter's chart as the template draws it.
type usageChart struct {
	Width, Height      int
	PlotLeft, BaseLine int
	LabelY             int
	Ticks              []axisTick
	Days               []usageDay
	Legend             []legendEntry
	Additive           bool // the legend's totals mean something: sum and count
}

// axisTick is one labelled line of the value axis.
type axisTick struct {
	Y     int
	Label string
}

// usageDay is one day's column: its segments bottom up.
type usageDay struct {
	Date     string // "2026-11-23"
	Label    string // "Nov 23" on labelled days, else ""
	LabelX   int
	Segments []usageSegment
}

// usageSegment is one series' figure on one day; Value is its exact text.
type usageSegment struct {
	X, Y, W, H   int
	Class, Label string
	Value        string
}

// legendEntry names one series, with its exact total over the days (Total) and the same
// with its digits grouped (Shown).
type legendEntry struct {
	Class, Label, Total, Shown string
	Rest                       bool
}

// seriesClass is a series' colour in style.css: s0…s4 for the top groups, rest for the rest.
func seriesClass(s usageSeries, i int) string {
	if s.Rest {
		return "rest"
	}
	return "s" + strconv.Itoa(i)
}

// drawUsage lays out series over days. Heights are float approximations of the exact
// figures (the titles and the legend show those); negative figures are not drawn.
func drawUsage(series []usageSeries, days []time.Time, aggregation string) usageChart {
	ch := usageChart{Width: usageWidth, Height: usageHeight, PlotLeft: usageAxisW,
		BaseLine: usagePlotTop + usagePlotH, LabelY: usageHeight - 4,
		Additive: aggregation == models.AggSum || aggregation == models.AggCount}
	for i, s := range series {
		total := decimalText(s.Total)
		ch.Legend = append(ch.Legend, legendEntry{Class: seriesClass(s, i), Label: s.Label, Total: total, Shown: groupDigits(total), Rest: s.Rest})
	}
	stacks := make([]float64, len(days))
	for d := range days {
		for _, s := range series {
			stacks[d] += max(0, ratFloat(s.Daily[d]))
		}
	}
	top, step := axisScale(slicesMax(stacks))
	for i := 0; float64(i)*step <= top*(1+1e-9); i++ {
		v := float64(i) * step
		ch.Ticks = append(ch.Ticks, axisTick{Y: ch.BaseLine - barHeight(v, top, usagePlotH), Label: tickLabel(v)})
	}
	for d, day := range days {
		col := usageDay{Date: day.Format("2006-01-02"), LabelX: usageAxisW + d*usageDayW + usageDayW/2}
		if (len(days)-1-d)%7 == 0 {
			col.Label = day.Format("Jan 2")
		}
		x := usageAxisW + d*usageDayW + (usageDayW-usageBarW)/2
		cum, below := 0.0, 0
		for i, s := range series {
			v := ratFloat(s.Daily[d])
			if v <= 0 {
				continue
			}
			cum += v
			// Each segment ends where the stack so far ends, so rounding never opens gaps;
			// a positive figure keeps at least one unit.
			h := min(usagePlotH, max(barHeight(cum, top, usagePlotH), below+1))
			col.Segments = append(col.Segments, usageSegment{X: x, Y: ch.BaseLine - h, W: usageBarW, H: h - below,
				Class: seriesClass(s, i), Label: s.Label, Value: decimalText(s.Daily[d])})
			below = h
		}
		ch.Days = append(ch.Days, col)
	}
	return ch
}

func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

func slicesMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// axisScale picks the axis' step, 1, 2 or 5 × 10^k, for about usageSteps steps up to
// peak, and its top, the first step at or above peak: round numbers people read at a
// glance. An empty chart gets the axis 0–1.
func axisScale(peak float64) (top, step float64) {
	if peak <= 0 || math.IsInf(peak, 0) || math.IsNaN(peak) {
		return 1, 1
	}
	raw := peak / usageSteps
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return step * math.Ceil(peak/step-1e-9), step
}

// tickLabel writes an axis value briefly: 1.5k, 20M, 0.25. Ticks are multiples of a
// round step, so rounding to nine decimals only removes float noise.
func tickLabel(v float64) string {
	unit := ""
	for _, u := range []struct {
		div  float64
		name string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.div {
			v, unit = v/u.div, u.name
			break
		}
	}
	return strconv.FormatFloat(math.Round(v*1e9)/1e9, 'f', -1, 64) + unit
}

package dashboard

import (
	"cmp"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/models"
)

// usageTopGroups is how many groups the Usage page draws on their own; the others are
// summed into one series, "the rest" (CONTRACT §18: top five groups and the rest).
const usageTopGroups = 5

// usageSeries is one series of a meter's chart: a group's daily figures, or the rest's.
type usageSeries struct {
	Label  string
	Rest   bool
	Groups int        // how many groups it sums: 1, or the rest's count
	Daily  []*big.Rat // one per day of the chart, zero on days without a figure
	Total  *big.Rat   // the sum of Daily: what the groups are ranked by
}

// groupKey tells groups apart: the account, then each group_by value with absent
// values (nil) distinct from any text.
func groupKey(v meters.Value, groupBy []string) string {
	var b strings.Builder
	b.WriteString(v.AccountID)
	for _, k := range groupBy {
		b.WriteByte(0)
		if p := v.Group[k]; p != nil {
			b.WriteByte('=')
			b.WriteString(*p)
		}
	}
	return b.String()
}

// groupLabel names a group as people read it: "acct_1 · region=eu", an absent value
// shown as "(none)" (the API's null).
func groupLabel(v meters.Value, groupBy []string) string {
	parts := []string{v.AccountID}
	for _, k := range groupBy {
		val := "(none)"
		if p := v.Group[k]; p != nil {
			val = *p
		}
		parts = append(parts, k+"="+val)
	}
	return strings.Join(parts, " · ")
}

// buildSeries turns a meter's daily figures into the chart's series: the usageTopGroups
// groups with the largest totals over the days (ties by label, so a page is stable), then
// one series summing every other group, day by day, when there are more. The sums are
// exact (figures are exact decimals: billing data); a figure outside the days or that is
// not a number is left out, and bad counts how many were.
func buildSeries(rows []meters.Value, aggregation string, groupBy []string, days []time.Time) (series []usageSeries, bad int) {
	dayIndex := make(map[int64]int, len(days))
	for i, d := range days {
		dayIndex[d.Unix()] = i
	}
	byKey := map[string]*usageSeries{}
	var all []*usageSeries
	for _, r := range rows {
		i, ok := dayIndex[r.WindowStart.UTC().Unix()]
		v, isNum := new(big.Rat).SetString(r.Value)
		if !ok || !isNum {
			bad++
			continue
		}
		key := groupKey(r, groupBy)
		s := byKey[key]
		if s == nil {
			s = newUsageSeries(groupLabel(r, groupBy), len(days))
			byKey[key] = s
			all = append(all, s)
		}
		s.Daily[i].Add(s.Daily[i], v)
		s.Total.Add(s.Total, v)
	}
	slices.SortFunc(all, func(a, b *usageSeries) int {
		return cmp.Or(b.Total.Cmp(a.Total), strings.Compare(a.Label, b.Label))
	})
	for i, s := range all {
		if i < usageTopGroups || len(all) == usageTopGroups+1 {
			// A lone sixth group is drawn as itself rather than as a "rest" of one.
			series = append(series, *s)
			continue
		}
		if i == usageTopGroups {
			series = append(series, *newUsageSeries("", len(days)))
			series[usageTopGroups].Rest = true
			series[usageTopGroups].Groups = 0
		}
		rest := &series[usageTopGroups]
		rest.Groups++
		for d, v := range s.Daily {
			rest.Daily[d].Add(rest.Daily[d], v)
		}
		rest.Total.Add(rest.Total, s.Total)
		rest.Label = restLabel(aggregation, rest.Groups)
	}
	return series, bad
}

func newUsageSeries(label string, days int) *usageSeries {
	s := &usageSeries{Label: label, Groups: 1, Daily: make([]*big.Rat, days), Total: new(big.Rat)}
	for i := range s.Daily {
		s.Daily[i] = new(big.Rat)
	}
	return s
}

// restLabel names the rest honestly: for a sum or a count it is the other groups'
// total; for the other aggregations it is a sum of per-group figures (for unique_count
// a value seen in two groups counts twice), which is not the meter's figure for them.
func restLabel(aggregation string, groups int) string {
	n := strconv.Itoa(groups) + " other groups"
	switch aggregation {
	case models.AggSum, models.AggCount:
		return "the rest (" + n + ")"
	case models.AggUniqueCount:
		return "the rest (" + n + ", sum of their distinct counts)"
	default:
		return "the rest (" + n + ", sum of their " + aggregation + " figures)"
	}
}

// decimalText writes r in plain decimal, exactly: the figures and their sums are
// decimals, so a finite expansion exists; the digit bound only guards against a
// figure that is not one.
func decimalText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	scale, ten := 0, big.NewRat(10, 1)
	for x := new(big.Rat).Set(r); !x.IsInt() && scale < 60; scale++ {
		x.Mul(x, ten)
	}
	s := r.FloatString(scale)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// groupDigits writes a plain decimal's integer digits in groups of three, "27,996.5":
// the figures are read at a glance, their exact text stays in the page's data attributes.
func groupDigits(dec string) string {
	sign, intPart, frac := "", dec, ""
	if strings.HasPrefix(intPart, "-") {
		sign, intPart = "-", intPart[1:]
	}
	if i := strings.IndexByte(intPart, '.'); i >= 0 {
		intPart, frac = intPart[:i], intPart[i:]
	}
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return sign + b.String() + frac
}

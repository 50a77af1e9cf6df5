package meters

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Reference computes a meter's values straight from raw usage rows, the way CONTRACT §18
// defines them, without kept figures: the oracle the tests hold the kept figures to
// (store.MeterRows reads the rows). Rows whose metadata has the canonical text v for
// every filter k are grouped by the window of their timestamp in [from, to), account and
// the groupBy keys; the answer is in the values API's order.
func Reference(m models.Meter, rows []store.UsageRow, window string, from, to time.Time, groupBy []string, filters map[string]string) ([]Value, error) {
	accs := map[string]*refAcc{}
	var order []string
	for i := range rows {
		r := &rows[i]
		ts := r.Timestamp.UTC()
		if !matches(&m, r) || ts.Before(from) || !ts.Before(to) {
			continue
		}
		d := parseDims(string(r.Metadata))
		if !keeps(d, filters) {
			continue
		}
		var member *string
		if m.Aggregation == models.AggUniqueCount {
			if member = d.value(m.ValueKey); member == nil {
				continue
			}
		}
		start := period.Start(ts, window)
		vals, groups := d.groupOf(groupBy)
		key := start.Format(time.RFC3339) + "\x00" + r.AccountID + "\x00" + groups
		a := accs[key]
		if a == nil {
			g := map[string]*string{}
			for j, k := range groupBy {
				g[k] = vals[j]
			}
			a = &refAcc{v: Value{WindowStart: start, WindowEnd: period.End(start, window), AccountID: r.AccountID, Group: g},
				distinct: map[string]bool{}}
			accs[key] = a
			order = append(order, key)
		}
		v, err := decimal.ParseStored(r.MetricValue)
		if err != nil {
			return nil, err
		}
		a.add(m.Aggregation, r, ts, &v, member)
	}
	out := make([]Value, 0, len(order))
	for _, key := range order {
		a := accs[key]
		if m.Aggregation == models.AggUniqueCount {
			n, _ := decimal.ParseStored(strconv.Itoa(len(a.distinct)))
			a.sum = n
		}
		a.v.Value = a.sum.String()
		out = append(out, a.v)
	}
	sortValues(out, groupBy)
	return out, nil
}

// refAcc is one value of Reference's answer being computed.
type refAcc struct {
	v        Value
	sum      decimal.Decimal
	has      bool
	ts       time.Time
	seq      int64
	id       string
	distinct map[string]bool
}

// add folds row r (at ts, of value v; of member for unique_count) into a under agg.
func (a *refAcc) add(agg string, r *store.UsageRow, ts time.Time, v *decimal.Decimal, member *string) {
	switch agg {
	case models.AggSum:
		a.sum = a.sum.Add(v)
	case models.AggCount:
		a.sum = a.sum.Add(&unit.value)
	case models.AggMax:
		if !a.has || v.Cmp(&a.sum) > 0 {
			a.sum = *v
		}
	case models.AggMin:
		if !a.has || v.Cmp(&a.sum) < 0 {
			a.sum = *v
		}
	case models.AggLatest:
		later := !a.has || ts.After(a.ts) || (ts.Equal(a.ts) && (r.BatchSeq > a.seq || (r.BatchSeq == a.seq && r.ID > a.id)))
		if later {
			a.sum, a.ts, a.seq, a.id = *v, ts, r.BatchSeq, r.ID
		}
	case models.AggUniqueCount:
		a.distinct[*member] = true
	}
	a.has = true
}

// sortValues puts values in the values API's order: window, account, groups.
func sortValues(out []Value, groupBy []string) {
	slices.SortFunc(out, func(x, y Value) int {
		if c := x.WindowStart.Compare(y.WindowStart); c != 0 {
			return c
		}
		if c := strings.Compare(x.AccountID, y.AccountID); c != 0 {
			return c
		}
		cx, cy := x.cursorOf(groupBy), y.cursorOf(groupBy)
		return strings.Compare(cx.Groups, cy.Groups)
	})
}

// keeps tells whether metadata d passes every filter.
func keeps(d dims, filters map[string]string) bool {
	for k, v := range filters {
		if got := d.value(k); got == nil || *got != v {
			return false
		}
	}
	return true
}

// ReferenceFiring is an (alert, series, window) whose value, computed from raw rows by
// Reference, reaches the alert's threshold: a firing CONTRACT §24 calls for. GroupValues
// are the series' group values in the meter's group_by order.
type ReferenceFiring struct {
	Alert       models.MeterAlert
	Value       Value
	GroupValues []*string
}

// ReferenceFirings are the firings the raw rows call for, for m's alerts among alerts,
// over the windows in [from, to): every watched (series, window) whose final value
// reaches the threshold, its window ending after the alert's creation; below counts the
// watched ones that stay under. It reads the alerts' account, group and threshold on its
// own, not as the consumer does, so that it stays an oracle. With positive values only, a
// final value that reaches the threshold did so at some transaction.
func ReferenceFirings(m models.Meter, alerts []models.MeterAlert, rows []store.UsageRow, from, to time.Time) (fire []ReferenceFiring, below int, err error) {
	for _, a := range alerts {
		if a.MeterID != m.ID {
			continue
		}
		vals, err := Reference(m, rows, a.Window, from, to, m.GroupBy, nil)
		if err != nil {
			return nil, 0, err
		}
		var group map[string]string
		_ = json.Unmarshal([]byte(a.Group), &group)
		threshold, _ := decimal.ParseStored(a.Threshold)
	values:
		for _, v := range vals {
			if (a.AccountID != "" && v.AccountID != a.AccountID) || !v.WindowEnd.After(a.CreatedAt) {
				continue
			}
			for k, want := range group {
				if g := v.Group[k]; g == nil || *g != want {
					continue values
				}
			}
			if got, _ := decimal.ParseStored(v.Value); got.Cmp(&threshold) < 0 {
				below++
				continue
			}
			gv := make([]*string, len(m.GroupBy))
			for i, k := range m.GroupBy {
				gv[i] = v.Group[k]
			}
			fire = append(fire, ReferenceFiring{Alert: a, Value: v, GroupValues: gv})
		}
	}
	return fire, below, nil
}

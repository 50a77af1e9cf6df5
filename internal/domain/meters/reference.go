package meters

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Reference computes a meter's values straight from raw usage rows, the way CONTRACT §18
// defines them, without kept figures: the oracle the tests hold the kept figures to
// (store.MeterRows reads the rows). Rows whose metadata has the canonical text v for
// every filter k are grouped by the window of their timestamp in [from, to), account and
// the groupBy keys; the answer is in the values API's order.
func Reference(m models.Meter, rows []store.UsageRow, window string, from, to time.Time, groupBy []string, filters map[string]string) ([]Value, error) {
	type acc struct {
		v        Value
		sum      usage.Decimal
		has      bool
		ts       time.Time
		seq      int64
		id       string
		distinct map[string]bool
	}
	accs := map[string]*acc{}
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
		start := windowStart(ts, window)
		vals, groups := d.groupOf(groupBy)
		key := start.Format(time.RFC3339) + "\x00" + r.AccountID + "\x00" + groups
		a := accs[key]
		if a == nil {
			g := map[string]*string{}
			for j, k := range groupBy {
				g[k] = vals[j]
			}
			a = &acc{v: Value{WindowStart: start, WindowEnd: windowEnd(start, window), AccountID: r.AccountID, Group: g},
				distinct: map[string]bool{}}
			accs[key] = a
			order = append(order, key)
		}
		v, err := usage.ParseStored(r.MetricValue)
		if err != nil {
			return nil, err
		}
		switch m.Aggregation {
		case models.AggSum:
			a.sum = a.sum.Add(&v)
		case models.AggCount:
			a.sum = a.sum.Add(&unit.value)
		case models.AggMax:
			if !a.has || v.Cmp(&a.sum) > 0 {
				a.sum = v
			}
		case models.AggMin:
			if !a.has || v.Cmp(&a.sum) < 0 {
				a.sum = v
			}
		case models.AggLatest:
			later := !a.has || ts.After(a.ts) || (ts.Equal(a.ts) && (r.BatchSeq > a.seq || (r.BatchSeq == a.seq && r.ID > a.id)))
			if later {
				a.sum, a.ts, a.seq, a.id = v, ts, r.BatchSeq, r.ID
			}
		case models.AggUniqueCount:
			a.distinct[*member] = true
		}
		a.has = true
	}
	out := make([]Value, 0, len(order))
	for _, key := range order {
		a := accs[key]
		if m.Aggregation == models.AggUniqueCount {
			n, _ := usage.ParseStored(strconv.Itoa(len(a.distinct)))
			a.sum = n
		}
		a.v.Value = a.sum.String()
		out = append(out, a.v)
	}
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
	return out, nil
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

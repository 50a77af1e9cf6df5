package meters

import (
	"fmt"
	"slices"
	"time"

	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Usage alerts fire (CONTRACT §24) in the transaction that writes a series' figures: the
// consumer's turn or a backfill page. Only what the transaction wrote is looked at — the
// series and windows of its figures — and each meter costs a few set-based statements
// (the firings already recorded, a month's day figures), whatever the number of series:
// the consumer is the ingest's hot path. The environment's usage cursor, which the
// transaction holds, serialises every writer of figures and firings of the environment,
// so a firing found missing is still missing when recorded; its key (alert, account,
// group, window start) would refuse a second one anyway.

// DefaultAlertEventsPerHour is REVOPS_ALERT_EVENTS_PER_HOUR's default (CONTRACT §24).
const DefaultAlertEventsPerHour = 1000

// candidate is one (alert, series, window) a transaction's figures touched.
type candidate struct {
	alert      *watch
	accountID  string
	groups     string
	start, end time.Time
	value      string // the day's (or a unique_count month's) figure; month sums are read
}

// watch is an alert with its group parsed: the index of each watched key in the meter's
// group_by, and the value it must have.
type watch struct {
	models.MeterAlert
	meter     *models.Meter
	threshold decimal.Decimal
	keys      []int
	values    []*string // canonical text, as the series' group values (nil: absent)
}

// fireAlerts records the firings of the transaction's figures and emits their events
// (alertEvents: the environment's cap per hour; 0 is the default).
func fireAlerts(tx *store.Tx, alertEvents int) error {
	if !tx.WroteFigures() {
		return nil
	}
	alerts, err := tx.MeterAlerts()
	if err != nil || len(alerts) == 0 {
		return err
	}
	wrote := tx.Wrote()
	ms, err := tx.Meters() // as the transaction leaves them: a backfill's progress saved
	if err != nil {
		return err
	}
	watches := watchesOf(ms, alerts)
	if len(watches) == 0 {
		return nil
	}
	var fired []firing
	for mi := range ms {
		m := &ms[mi]
		if len(watches[m.ID]) == 0 {
			continue
		}
		got, err := meterFirings(tx, m, watches[m.ID], wrote)
		if err != nil {
			return fmt.Errorf("alerts of meter %s: %w", m.Key, err)
		}
		fired = append(fired, got...)
	}
	if len(fired) == 0 {
		return nil
	}
	oldest, err := tx.OldestWaitingBatch()
	if err != nil {
		return err
	}
	for i := range fired {
		fired[i].asOf = asOfFigures(fired[i].alert.meter, oldest, tx.Now())
	}
	return record(tx, fired, alertEvents)
}

// asOfFigures is §18's as_of of m's figures once the transaction commits: the oldest
// batch the consumer has not taken, or (while m backfills) the oldest its backfill has
// not counted, or the transaction's time when every batch is counted.
func asOfFigures(m *models.Meter, oldest *time.Time, now time.Time) time.Time {
	at := now
	if oldest != nil && oldest.Before(at) {
		at = *oldest
	}
	if m.Status == models.MeterBackfilling && m.BackfillAsOf != nil && m.BackfillAsOf.Before(at) {
		at = *m.BackfillAsOf
	}
	return at.UTC()
}

// watchesOf parses the alerts of the meters that may fire (sum, count, max and
// unique_count: the API refuses the others), by meter id.
func watchesOf(ms []models.Meter, alerts []models.MeterAlert) map[string][]*watch {
	byID := map[string]*models.Meter{}
	for i := range ms {
		byID[ms[i].ID] = &ms[i]
	}
	out := map[string][]*watch{}
	for _, a := range alerts {
		m := byID[a.MeterID]
		if m == nil || m.Aggregation == models.AggMin || m.Aggregation == models.AggLatest {
			continue
		}
		w, ok := watchOf(a, m)
		if ok {
			out[m.ID] = append(out[m.ID], w)
		}
	}
	return out
}

// watchOf parses an alert of m. An alert it cannot read (the API checks threshold and
// group before storing them) watches nothing, rather than failing the transaction and
// stopping its environment's figures with it. The group's values are compared as the
// series' are kept: by canonical text (1, 1.0 and "1" are one value).
func watchOf(a models.MeterAlert, m *models.Meter) (*watch, bool) {
	w := &watch{MeterAlert: a, meter: m}
	var err error
	if w.threshold, err = decimal.ParseStored(a.Threshold); err != nil {
		return nil, false
	}
	group := parseDims(a.Group)
	if group == nil && a.Group != "{}" && a.Group != "" {
		return nil, false
	}
	for k := range group {
		i := slices.Index(m.GroupBy, k)
		if i < 0 {
			return nil, false // no series of the meter has it
		}
		w.keys, w.values = append(w.keys, i), append(w.values, group.value(k))
	}
	return w, true
}

// watches tells whether the series (account, group values) is one w watches.
func (w *watch) watches(accountID string, vals []*string) bool {
	if w.AccountID != "" && w.AccountID != accountID {
		return false
	}
	for i, k := range w.keys {
		var v *string
		if k < len(vals) {
			v = vals[k]
		}
		if (v == nil) != (w.values[i] == nil) || (v != nil && *v != *w.values[i]) {
			return false
		}
	}
	return true
}

// figureKind is the kind of kept figure w's window is read from (windows.go's keptKind):
// unique_count keeps its months; the others add their days up.
func (w *watch) figureKind() string {
	if w.Window == models.AlertWindowMonth && w.meter.Aggregation == models.AggUniqueCount {
		return WindowMonth
	}
	return WindowDay
}

// candidates lists the (alert, series, window) of the written figures of m, once each.
// A window that ended before its alert was created is none of its alert's.
func candidates(m *models.Meter, ws []*watch, wrote []models.MeterFigure) []candidate {
	type key struct {
		alert, account, groups string
		start                  int64
	}
	seen := map[key]bool{}
	var out []candidate
	parsed := map[string][]*string{}
	for i := range wrote {
		f := &wrote[i]
		if f.MeterID != m.ID || (f.Kind != WindowDay && f.Kind != WindowMonth) {
			continue
		}
		vals, ok := parsed[f.Groups]
		if !ok {
			vals = parseGroups(f.Groups)
			parsed[f.Groups] = vals
		}
		for _, w := range ws {
			if f.Kind != w.figureKind() || !w.watches(f.AccountID, vals) {
				continue
			}
			start := period.Start(f.WindowStart, w.Window)
			end := period.End(start, w.Window)
			if !end.After(w.CreatedAt) {
				continue
			}
			// The transaction wrote each figure once: only a month made of days can come
			// up more than once.
			if w.Window == models.AlertWindowMonth && f.Kind == WindowDay {
				k := key{w.ID, f.AccountID, f.Groups, start.UnixNano()}
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			c := candidate{alert: w, accountID: f.AccountID, groups: f.Groups, start: start, end: end}
			if w.Window == models.AlertWindowDay || f.Kind == WindowMonth {
				c.value = f.Value
			}
			out = append(out, c)
		}
	}
	return out
}

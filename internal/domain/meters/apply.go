package meters

import (
	"fmt"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// apply counts rows (of batches not yet counted into these meters) into meters: the
// work of consumer steps and backfill pages (step.go).
func apply(tx *store.Tx, meters []models.Meter, rows []store.UsageRow) error {
	d := newRowDims(meters, rows)
	for mi := range meters {
		m := &meters[mi]
		var err error
		if m.Aggregation == models.AggUniqueCount {
			err = applyUnique(tx, m, rows, d)
		} else {
			err = applyFigures(tx, m, rows, d)
		}
		if err != nil {
			return fmt.Errorf("meter %s: %w", m.Key, err)
		}
	}
	return nil
}

// matches tells whether m counts r.
func matches(m *models.Meter, r *store.UsageRow) bool {
	return r.MetricName == m.FilterMetricName && (m.FilterProduct == "" || r.Product == m.FilterProduct)
}

// applyFigures counts rows into a sum, count, max, min or latest meter: each row's
// figure is folded into its minute (its hour's slot), hour and day.
func applyFigures(tx *store.Tx, m *models.Meter, rows []store.UsageRow, d *rowDims) error {
	p := newPending(m)
	for i := range rows {
		r := &rows[i]
		if !matches(m, r) {
			continue
		}
		f, err := rowFigure(m.Aggregation, r)
		if err != nil {
			return err
		}
		vals, groups := d.group(i, m.GroupBy)
		ts := r.Timestamp.UTC()
		p.addMinute(ts, r.AccountID, groups, vals, &f)
		p.add(WindowHour, ts, r.AccountID, groups, vals, &f)
		p.add(WindowDay, ts, r.AccountID, groups, vals, &f)
	}
	return p.save(tx)
}

// seen is one distinct value's sighting: a day and a minute of it.
type seen struct {
	day    time.Time
	minute int
}

// secondsPerDay turns a UTC day's Unix seconds into the day number meter_member_days keeps.
const secondsPerDay = 24 * 60 * 60

// memberDays is what is kept of one distinct value: its days, each with its minutes.
type memberDays map[int64][]int // day (Unix seconds) → minutes of the day, ascending

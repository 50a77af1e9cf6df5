package meters

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// firing is a candidate found at or over its threshold, not fired before; asOf is the
// figures' as_of (asOfFigures).
type firing struct {
	candidate
	value string
	asOf  time.Time
}

// meterFirings finds the new firings among the candidates of m's written figures: those
// whose window's value reaches the threshold and that are not recorded yet. Those this
// process knows recorded are dropped first, without a statement; the values are then
// read (for month alerts of sum, count and max meters, the days the months add up, in
// one statement), and only the candidates at or over their threshold are looked for
// among the recorded firings (one statement, or one per 500 accounts): a threshold no
// series reaches costs no read of firings, turn after turn.
func meterFirings(tx *store.Tx, m *models.Meter, ws []*watch, wrote []models.MeterFigure) ([]firing, error) {
	cs := candidates(m, ws, wrote)
	if len(cs) == 0 {
		return nil, nil
	}
	keys := make([]store.FiringKey, len(cs))
	for i := range cs {
		keys[i] = cs[i].key()
	}
	known := tx.KnownFired(keys)
	n := 0
	for i := range cs {
		if !known[i] {
			cs[n] = cs[i]
			n++
		}
	}
	cs = cs[:n]
	if err := monthValues(tx, m, cs); err != nil {
		return nil, err
	}
	var over []firing
	for _, c := range cs {
		v, err := decimal.ParseStored(c.value)
		if err != nil {
			return nil, err
		}
		if v.Cmp(&c.alert.threshold) >= 0 {
			over = append(over, firing{candidate: c, value: v.String()})
		}
	}
	if len(over) == 0 {
		return nil, nil
	}
	return notFired(tx, over)
}

// notFired drops the firings recorded already.
func notFired(tx *store.Tx, fs []firing) ([]firing, error) {
	keys := make([]store.FiringKey, len(fs))
	for i := range fs {
		keys[i] = fs[i].key()
	}
	got, err := tx.Fired(keys)
	if err != nil {
		return nil, err
	}
	fired := make(map[store.FiringKey]bool, len(got))
	for _, k := range got {
		k.WindowStart = k.WindowStart.UTC()
		fired[k] = true
	}
	return slices.DeleteFunc(fs, func(f firing) bool { return fired[f.key()] }), nil
}

// key names the candidate's firing.
func (c *candidate) key() store.FiringKey {
	return store.FiringKey{AlertID: c.alert.ID, AccountID: c.accountID, Groups: c.groups, WindowStart: c.start}
}

// monthValues fills in the month values of sum, count and max candidates (value ""),
// from the kept days of their months: the sum, or the max, of the days.
func monthValues(tx *store.Tx, m *models.Meter, cs []candidate) error {
	type month struct {
		series store.SeriesKey
		start  int64
	}
	var series []store.SeriesKey
	seen := map[store.SeriesKey]bool{}
	var from, to time.Time
	for _, c := range cs {
		if c.value != "" {
			continue
		}
		s := store.SeriesKey{AccountID: c.accountID, Groups: c.groups}
		if !seen[s] {
			seen[s] = true
			series = append(series, s)
		}
		if from.IsZero() || c.start.Before(from) {
			from = c.start
		}
		to = maxTime(to, c.end)
	}
	if len(series) == 0 {
		return nil
	}
	days, err := tx.DayFigures(m.ID, series, from, to)
	if err != nil {
		return err
	}
	sums := map[month]*figure{}
	for i := range days {
		d := &days[i]
		v, err := decimal.ParseStored(d.Value)
		if err != nil {
			return err
		}
		k := month{store.SeriesKey{AccountID: d.AccountID, Groups: d.Groups}, period.Start(d.WindowStart, WindowMonth).UnixNano()}
		f := sums[k]
		if f == nil {
			f = &figure{}
			sums[k] = f
		}
		f.combine(m.Aggregation, &figure{value: v, has: true})
	}
	for i := range cs {
		c := &cs[i]
		if c.value != "" {
			continue
		}
		c.value = "0"
		if f := sums[month{store.SeriesKey{AccountID: c.accountID, Groups: c.groups}, c.start.UnixNano()}]; f != nil {
			c.value = f.value.String()
		}
	}
	return nil
}

// record writes the firings and the events that list them: one per alert, unless the
// environment has sent alertEvents this clock hour already (UTC), in which case its
// firings are recorded without an event and counted in the next event's held_back.
func record(tx *store.Tx, fs []firing, alertEvents int) error {
	if len(fs) == 0 {
		return nil
	}
	if alertEvents <= 0 {
		alertEvents = DefaultAlertEventsPerHour
	}
	slices.SortFunc(fs, func(a, b firing) int {
		return cmp.Or(a.alert.CreatedAt.Compare(b.alert.CreatedAt), cmp.Compare(a.alert.ID, b.alert.ID),
			cmp.Compare(a.accountID, b.accountID), cmp.Compare(a.groups, b.groups), a.start.Compare(b.start))
	})
	now := tx.Now()
	limit, err := tx.AlertCap()
	if err != nil {
		return err
	}
	if hour := now.Truncate(time.Hour); !limit.HourStart.Equal(hour) {
		limit.HourStart, limit.Sent = hour, 0
	}
	rows := make([]models.MeterAlertFiring, 0, len(fs))
	for i := 0; i < len(fs); {
		j := i
		for j < len(fs) && fs[j].alert == fs[i].alert {
			j++
		}
		eventID := ""
		if limit.Sent < alertEvents {
			eventID = uuid.NewString()
			tx.Emit(crossedEmit(eventID, fs[i:j], limit.HeldBack))
			limit.Sent, limit.HeldBack = limit.Sent+1, 0
		} else {
			limit.HeldBack += j - i
		}
		for _, f := range fs[i:j] {
			rows = append(rows, models.MeterAlertFiring{
				AlertID: f.alert.ID, AccountID: f.accountID, Groups: f.groups, WindowStart: f.start,
				MeterID: f.alert.MeterID, WindowEnd: f.end, Value: f.value,
				AsOf: f.asOf, EventID: eventID, CreatedAt: now,
			})
		}
		i = j
	}
	if err := tx.SaveAlertCap(limit); err != nil {
		return err
	}
	return tx.InsertFirings(rows)
}

// crossedEmit is the meter-threshold-crossed event of one alert's firings (one alert's,
// sorted by series and window): the first catalog.MaxCrossings listed, the rest counted.
func crossedEmit(id string, fs []firing, heldBack int) store.Emit {
	w := fs[0].alert
	body := catalog.ThresholdCrossed{
		AlertID: w.ID, Meter: w.meter.Key, MeterID: w.MeterID, Threshold: json.Number(w.threshold.String()),
		Window: w.Window, Crossings: []catalog.Crossing{}, HeldBack: heldBack,
	}
	for _, f := range fs[:min(len(fs), catalog.MaxCrossings)] {
		group := map[string]*string{}
		vals := parseGroups(f.groups)
		for i, k := range w.meter.GroupBy {
			if i < len(vals) {
				group[k] = vals[i]
			}
		}
		body.Crossings = append(body.Crossings, catalog.Crossing{
			AccountID: f.accountID, Group: group, WindowStart: rfc3339(f.start), WindowEnd: rfc3339(f.end),
			Value: json.Number(f.value), AsOf: rfc3339(f.asOf),
		})
	}
	body.More = len(fs) - len(body.Crossings)
	return store.Emit{ID: id, Type: catalog.MeterThresholdCrossed, ObjectType: "meter_alert", ObjectID: w.ID, Object: body}
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

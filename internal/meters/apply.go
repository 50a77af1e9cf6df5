package meters

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/usage"
	"github.com/revops/revops/models"
)

// figure is one figure being combined: a window's value for one account and group.
type figure struct {
	value     usage.Decimal
	has       bool
	latestTS  time.Time
	latestSeq int64
	latestID  string
}

// later tells whether the row (ts, seq, id) comes after the figure's latest one: by
// timestamp, then ingest (batch seq), then position in the batch (uuid v7 ids increase).
func (f *figure) later(ts time.Time, seq int64, id string) bool {
	if !f.has {
		return true
	}
	if c := ts.Compare(f.latestTS); c != 0 {
		return c > 0
	}
	if seq != f.latestSeq {
		return seq > f.latestSeq
	}
	return id > f.latestID
}

// combine folds other (a row's own figure, or a kept one) into f under agg.
func (f *figure) combine(agg string, o *figure) {
	if !o.has {
		return
	}
	switch {
	case !f.has:
		*f = *o
		return
	case agg == models.AggSum || agg == models.AggCount || agg == models.AggUniqueCount:
		f.value = f.value.Add(&o.value)
	case agg == models.AggMax:
		if o.value.Cmp(&f.value) > 0 {
			f.value = o.value
		}
	case agg == models.AggMin:
		if o.value.Cmp(&f.value) < 0 {
			f.value = o.value
		}
	case agg == models.AggLatest:
		if f.later(o.latestTS, o.latestSeq, o.latestID) {
			*f = *o
		}
	}
}

// unit is the figure of a single count, parsed once: count meters fold it for every row.
// Copies share its digits safely, since combining never changes a value in place.
var unit = func() figure {
	d, _ := usage.ParseStored("1")
	return figure{value: d, has: true}
}()

// rowFigure is a usage row's own figure under agg.
func rowFigure(agg string, r *store.UsageRow) (figure, error) {
	if agg == models.AggCount {
		return unit, nil
	}
	v, err := usage.ParseStored(r.MetricValue)
	if err != nil {
		return figure{}, fmt.Errorf("usage row %s: metric value %q: %w", r.ID, r.MetricValue, err)
	}
	f := figure{value: v, has: true}
	if agg == models.AggLatest { // only latest orders its figures by row (and keeps that)
		f.latestTS, f.latestSeq, f.latestID = r.Timestamp.UTC(), r.BatchSeq, r.ID
	}
	return f, nil
}

// fromKept reads a kept figure, with its minutes when withSlots (a values query for
// hours or longer reads totals only: decoding sixty minutes per hour would be most of
// its cost).
func fromKept(k *models.MeterFigure, withSlots bool) (window, error) {
	v, err := usage.ParseStored(k.Value)
	if err != nil {
		return window{}, fmt.Errorf("kept figure of meter %s: %q: %w", k.MeterID, k.Value, err)
	}
	f := figure{value: v, has: true, latestSeq: k.LatestSeq, latestID: k.LatestID}
	if k.LatestTS != nil {
		f.latestTS = k.LatestTS.UTC()
	}
	if !withSlots {
		return window{total: f}, nil
	}
	slots, err := decodeSlots(k.Slots)
	if err != nil {
		return window{}, fmt.Errorf("kept figure of meter %s: %w", k.MeterID, err)
	}
	return window{total: f, slots: slots}, nil
}

// figKey is a store.FigureKey usable as a map key (times by their instant).
type figKey struct {
	kind      string
	start     int64
	accountID string
	groups    string
}

func keyOf(k store.FigureKey) figKey {
	return figKey{k.Kind, k.WindowStart.UnixNano(), k.AccountID, k.Groups}
}

// window is one kept figure: the window's own, and for an hour, each of its minutes'
// (slots), so that one row per hour, not per minute, is written.
type window struct {
	total figure
	slots map[int]*figure
}

// combine folds o into w under agg.
func (w *window) combine(agg string, o *window) {
	w.total.combine(agg, &o.total)
	for m, f := range o.slots {
		w.slot(m).combine(agg, f)
	}
}

func (w *window) slot(minute int) *figure {
	if w.slots == nil {
		w.slots = map[int]*figure{}
	}
	f := w.slots[minute]
	if f == nil {
		f = &figure{}
		w.slots[minute] = f
	}
	return f
}

// pending gathers one meter's figure changes of a transaction, then merges them with the
// kept figures and writes them back.
type pending struct {
	meter  *models.Meter
	keys   []store.FigureKey
	deltas map[figKey]*window
	groups map[string][MaxGroupBy]*string // group key → values (the g1..g3 columns)
}

func newPending(m *models.Meter) *pending {
	return &pending{meter: m, deltas: map[figKey]*window{}, groups: map[string][MaxGroupBy]*string{}}
}

// at is the pending figure of (kind, window start, account, group).
func (p *pending) at(kind string, start time.Time, accountID, groups string, vals [MaxGroupBy]*string) *window {
	k := store.FigureKey{Kind: kind, WindowStart: start, AccountID: accountID, Groups: groups}
	w, ok := p.deltas[keyOf(k)]
	if !ok {
		w = &window{}
		p.deltas[keyOf(k)] = w
		p.keys = append(p.keys, k)
		p.groups[groups] = vals
	}
	return w
}

// add folds f into the figure of the kind's window holding t.
func (p *pending) add(kind string, t time.Time, accountID, groups string, vals [MaxGroupBy]*string, f *figure) {
	p.at(kind, windowStart(t, kind), accountID, groups, vals).total.combine(p.meter.Aggregation, f)
}

// addMinute folds f into the figure of the minute holding t, kept in its hour's slots.
func (p *pending) addMinute(t time.Time, accountID, groups string, vals [MaxGroupBy]*string, f *figure) {
	hour := windowStart(t, WindowHour)
	w := p.at(WindowHour, hour, accountID, groups, vals)
	w.slot(int(t.Sub(hour)/time.Minute)).combine(p.meter.Aggregation, f)
}

// save merges the changes into the kept figures and writes them back, in the
// transaction that holds the environment's usage cursor (so no other writes between).
// An hour's minutes are merged as text: only the minutes this transaction changed are
// decoded and encoded again, the others are copied as they were kept.
func (p *pending) save(tx *store.MeterTx) error {
	if len(p.keys) == 0 {
		return nil
	}
	kept, err := tx.Figures(p.meter.ID, p.keys)
	if err != nil {
		return err
	}
	slots := make(map[figKey]string, len(kept))
	for i := range kept {
		k := &kept[i]
		key := figKey{k.Kind, k.WindowStart.UnixNano(), k.AccountID, k.Groups}
		d := p.deltas[key]
		if d == nil {
			continue
		}
		old, err := fromKept(k, false)
		if err != nil {
			return err
		}
		d.total.combine(p.meter.Aggregation, &old.total)
		if slots[key], err = mergeSlots(p.meter.Aggregation, k.Slots, d.slots); err != nil {
			return fmt.Errorf("kept figure of meter %s: %w", k.MeterID, err)
		}
	}
	out := make([]models.MeterFigure, 0, len(p.keys))
	for _, k := range p.keys {
		key := keyOf(k)
		w := p.deltas[key]
		text, ok := slots[key]
		if !ok {
			text = encodeSlots(w.slots)
		}
		mf := models.MeterFigure{MeterID: p.meter.ID, Kind: k.Kind, WindowStart: k.WindowStart, AccountID: k.AccountID,
			Groups: k.Groups, Value: w.total.value.String(), Slots: text}
		vals := p.groups[k.Groups]
		mf.G1, mf.G2, mf.G3 = vals[0], vals[1], vals[2]
		if p.meter.Aggregation == models.AggLatest {
			ts := w.total.latestTS
			mf.LatestTS, mf.LatestSeq, mf.LatestID = &ts, w.total.latestSeq, w.total.latestID
		}
		out = append(out, mf)
	}
	return tx.SaveFigures(out)
}

// encodeSlots writes an hour's minute figures: "minute=value" separated by ";", ascending
// by minute, with "|ts|seq|id" after the value when the figure orders by its latest row.
func encodeSlots(slots map[int]*figure) string {
	text, _ := mergeSlotsText(nil, slots, nil) // with nothing kept, nothing folds or fails
	return text
}

// mergeSlots folds changed (this transaction's minute figures) into kept, encodeSlots'
// text of the kept ones, decoding only the minutes both have.
func mergeSlots(agg string, kept string, changed map[int]*figure) (string, error) {
	if kept == "" {
		return encodeSlots(changed), nil
	}
	return mergeSlotsText(strings.Split(kept, ";"), changed, func(part string, f *figure) error {
		_, old, err := decodeSlot(part)
		if err != nil {
			return err
		}
		f.combine(agg, old)
		return nil
	})
}

// mergeSlotsText writes the kept minute parts (ascending) and the changed minutes in
// minute order; for a minute in both, fold folds the kept part into the changed figure,
// which is written in its place.
func mergeSlotsText(kept []string, changed map[int]*figure, fold func(part string, f *figure) error) (string, error) {
	minutes := make([]int, 0, len(changed))
	for m := range changed {
		minutes = append(minutes, m)
	}
	slices.Sort(minutes)
	var sb strings.Builder
	put := func(m int, f *figure) {
		if sb.Len() > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(strconv.Itoa(m))
		sb.WriteByte('=')
		sb.WriteString(f.value.String())
		if f.latestID != "" {
			fmt.Fprintf(&sb, "|%d|%d|%s", f.latestTS.UnixNano(), f.latestSeq, f.latestID)
		}
	}
	i := 0
	for _, part := range kept {
		head, _, _ := strings.Cut(part, "=")
		m, err := strconv.Atoi(head)
		if err != nil {
			return "", fmt.Errorf("minute figure %q", part)
		}
		for ; i < len(minutes) && minutes[i] < m; i++ {
			put(minutes[i], changed[minutes[i]])
		}
		if i < len(minutes) && minutes[i] == m {
			if err := fold(part, changed[m]); err != nil {
				return "", err
			}
			put(m, changed[m])
			i++
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(part)
	}
	for ; i < len(minutes); i++ {
		put(minutes[i], changed[minutes[i]])
	}
	return sb.String(), nil
}

// decodeSlots reads encodeSlots' text.
func decodeSlots(text string) (map[int]*figure, error) {
	if text == "" {
		return nil, nil
	}
	slots := map[int]*figure{}
	for _, part := range strings.Split(text, ";") {
		minute, f, err := decodeSlot(part)
		if err != nil {
			return nil, err
		}
		slots[minute] = f
	}
	return slots, nil
}

// decodeSlot reads one minute's part of encodeSlots' text.
func decodeSlot(part string) (int, *figure, error) {
	m, rest, ok := strings.Cut(part, "=")
	minute, err := strconv.Atoi(m)
	if !ok || err != nil {
		return 0, nil, fmt.Errorf("minute figure %q", part)
	}
	fields := strings.Split(rest, "|")
	v, err := usage.ParseStored(fields[0])
	if err != nil {
		return 0, nil, fmt.Errorf("minute figure %q: %w", part, err)
	}
	f := &figure{value: v, has: true}
	if len(fields) == 4 {
		ns, err1 := strconv.ParseInt(fields[1], 10, 64)
		seq, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, nil, fmt.Errorf("minute figure %q", part)
		}
		f.latestTS, f.latestSeq, f.latestID = time.Unix(0, ns).UTC(), seq, fields[3]
	}
	return minute, f, nil
}

// apply counts rows (of batches not yet counted into these meters) into meters: the
// store.MeterApply of the consumer and of backfill pages.
func apply(tx *store.MeterTx, meters []models.Meter, rows []store.UsageRow) error {
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
func applyFigures(tx *store.MeterTx, m *models.Meter, rows []store.UsageRow, d *rowDims) error {
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

// applyUnique counts rows into a unique_count meter. A value is new to a window when no
// minute of that window saw it yet; the minutes it was seen in are kept per day
// (meter_member_days), so a sighting is new to its minute, hour, day, ISO week and month
// exactly when those minutes say so, in whatever order rows come.
func applyUnique(tx *store.MeterTx, m *models.Meter, rows []store.UsageRow, d *rowDims) error {
	type valueKey struct { // a distinct value in a series, by text
		series store.SeriesKey
		value  string
	}
	sightings := map[valueKey][]seen{}
	var keys []valueKey
	groupVals := map[string][MaxGroupBy]*string{}
	var from, to time.Time
	for i := range rows {
		r := &rows[i]
		if !matches(m, r) {
			continue
		}
		value := d.value(i, m.ValueKey)
		if value == nil {
			continue // a row without a usable value is not counted (CONTRACT §18)
		}
		vals, groups := d.group(i, m.GroupBy)
		groupVals[groups] = vals
		k := valueKey{store.SeriesKey{AccountID: r.AccountID, Groups: groups}, *value}
		if _, ok := sightings[k]; !ok {
			keys = append(keys, k)
		}
		ts := r.Timestamp.UTC()
		day := windowStart(ts, WindowDay)
		sightings[k] = append(sightings[k], seen{day, int(ts.Sub(day) / time.Minute)})
		lo := min(windowStart(ts, WindowWeek).Unix(), windowStart(ts, WindowMonth).Unix())
		hi := max(windowEnd(windowStart(ts, WindowWeek), WindowWeek).Unix(), windowEnd(windowStart(ts, WindowMonth), WindowMonth).Unix())
		if from.IsZero() || lo < from.Unix() {
			from = time.Unix(lo, 0).UTC()
		}
		if hi > to.Unix() {
			to = time.Unix(hi, 0).UTC()
		}
	}
	if len(keys) == 0 {
		return nil
	}
	ids, err := memberKeys(tx, m, len(keys), func(i int) (store.SeriesKey, string) { return keys[i].series, keys[i].value })
	if err != nil {
		return err
	}
	kept, err := tx.MemberDays(ids, int32(from.Unix()/secondsPerDay), int32(to.Unix()/secondsPerDay))
	if err != nil {
		return err
	}
	known := make(map[store.MemberKey]memberDays, len(keys))
	for _, md := range kept {
		k := store.MemberKey{Series: md.Series, Member: md.Member}
		if known[k] == nil {
			known[k] = memberDays{}
		}
		known[k][int64(md.Day)*secondsPerDay] = parseMinutes(md.Minutes)
	}
	counts := newPending(m)
	var changed []models.MeterMemberDay
	for i, k := range keys {
		days := known[ids[i]]
		if days == nil {
			days = memberDays{}
		}
		acct, groups := k.series.AccountID, k.series.Groups
		touched := map[int64]bool{}
		for _, s := range sightings[k] {
			at := s.day.Add(time.Duration(s.minute) * time.Minute)
			for _, kind := range days.newTo(s) {
				if kind == WindowMinute {
					counts.addMinute(at, acct, groups, groupVals[groups], &unit)
				} else {
					counts.add(kind, at, acct, groups, groupVals[groups], &unit)
				}
			}
			days.see(s)
			touched[s.day.Unix()] = true
		}
		for day := range touched {
			changed = append(changed, models.MeterMemberDay{Series: ids[i].Series, Member: ids[i].Member,
				Day: int32(day / secondsPerDay), Minutes: formatMinutes(days[day])})
		}
	}
	if err := tx.SaveMemberDays(changed); err != nil {
		return err
	}
	return counts.save(tx)
}

// memberKeys numbers n distinct values (key(i) is the i-th's series and text) by their
// series and value numbers.
func memberKeys(tx *store.MeterTx, m *models.Meter, n int, key func(i int) (store.SeriesKey, string)) ([]store.MemberKey, error) {
	seriesAt, valueAt := map[store.SeriesKey]int{}, map[string]int{}
	var series []store.SeriesKey
	var values []string
	for i := range n {
		s, v := key(i)
		if _, ok := seriesAt[s]; !ok {
			seriesAt[s] = len(series)
			series = append(series, s)
		}
		if _, ok := valueAt[v]; !ok {
			valueAt[v] = len(values)
			values = append(values, v)
		}
	}
	seriesIDs, err := tx.SeriesIDs(m.ID, series)
	if err != nil {
		return nil, err
	}
	valueIDs, err := tx.ValueIDs(m.ID, values)
	if err != nil {
		return nil, err
	}
	out := make([]store.MemberKey, n)
	for i := range n {
		s, v := key(i)
		out[i] = store.MemberKey{Series: seriesIDs[seriesAt[s]], Member: valueIDs[valueAt[v]]}
	}
	return out, nil
}

// newTo lists the windows the sighting s is the value's first in (none if its minute
// was seen already).
func (d memberDays) newTo(s seen) []string {
	day := s.day.Unix()
	minutes := d[day]
	if _, found := slices.BinarySearch(minutes, s.minute); found {
		return nil
	}
	kinds := []string{WindowMinute}
	hour := s.minute / 60
	i, _ := slices.BinarySearch(minutes, hour*60)
	if i == len(minutes) || minutes[i] >= (hour+1)*60 {
		kinds = append(kinds, WindowHour)
	}
	if len(minutes) > 0 {
		return kinds
	}
	kinds = append(kinds, WindowDay)
	for _, w := range []string{WindowWeek, WindowMonth} {
		start := windowStart(s.day, w)
		if !d.anyIn(start, windowEnd(start, w)) {
			kinds = append(kinds, w)
		}
	}
	return kinds
}

// anyIn tells whether the value was seen on a day in [from, to).
func (d memberDays) anyIn(from, to time.Time) bool {
	for day, minutes := range d {
		if len(minutes) > 0 && day >= from.Unix() && day < to.Unix() {
			return true
		}
	}
	return false
}

// see records the sighting.
func (d memberDays) see(s seen) {
	day := s.day.Unix()
	i, found := slices.BinarySearch(d[day], s.minute)
	if !found {
		d[day] = slices.Insert(d[day], i, s.minute)
	}
}

func parseMinutes(text string) []int {
	if text == "" {
		return nil
	}
	parts := strings.Split(text, ",")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		if n, err := strconv.Atoi(p); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func formatMinutes(minutes []int) string {
	var sb strings.Builder
	for i, n := range minutes {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(n))
	}
	return sb.String()
}

package meters

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// seriesValue is a distinct value in a series, by text.
type seriesValue struct {
	series store.SeriesKey
	value  string
}

// batchSightings are the distinct values a batch of rows shows a unique_count meter: each
// value's sightings (day and minute), its series' group values, and the span of the weeks
// and months they fall in (the days whose kept minutes decide what is new).
type batchSightings struct {
	keys      []seriesValue // in the order rows first show them
	byKey     map[seriesValue][]seen
	groupVals map[string][MaxGroupBy]*string
	from, to  time.Time
}

// collectSightings reads the rows m counts: those without a usable value are not counted
// (CONTRACT §18).
func collectSightings(m *models.Meter, rows []store.UsageRow, d *rowDims) batchSightings {
	sg := batchSightings{byKey: map[seriesValue][]seen{}, groupVals: map[string][MaxGroupBy]*string{}}
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
		sg.groupVals[groups] = vals
		k := seriesValue{store.SeriesKey{AccountID: r.AccountID, Groups: groups}, *value}
		if _, ok := sg.byKey[k]; !ok {
			sg.keys = append(sg.keys, k)
		}
		ts := r.Timestamp.UTC()
		day := period.Start(ts, WindowDay)
		sg.byKey[k] = append(sg.byKey[k], seen{day, int(ts.Sub(day) / time.Minute)})
		lo := min(period.Start(ts, WindowWeek).Unix(), period.Start(ts, WindowMonth).Unix())
		hi := max(period.End(period.Start(ts, WindowWeek), WindowWeek).Unix(), period.End(period.Start(ts, WindowMonth), WindowMonth).Unix())
		if sg.from.IsZero() || lo < sg.from.Unix() {
			sg.from = time.Unix(lo, 0).UTC()
		}
		if hi > sg.to.Unix() {
			sg.to = time.Unix(hi, 0).UTC()
		}
	}
	return sg
}

// applyUnique counts rows into a unique_count meter. A value is new to a window when no
// minute of that window saw it yet; the minutes it was seen in are kept per day
// (meter_member_days), so a sighting is new to its minute, hour, day, ISO week and month
// exactly when those minutes say so, in whatever order rows come.
func applyUnique(tx *store.Tx, m *models.Meter, rows []store.UsageRow, d *rowDims) error {
	sg := collectSightings(m, rows, d)
	keys, sightings, groupVals, from, to := sg.keys, sg.byKey, sg.groupVals, sg.from, sg.to
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
func memberKeys(tx *store.Tx, m *models.Meter, n int, key func(i int) (store.SeriesKey, string)) ([]store.MemberKey, error) {
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
		start := period.Start(s.day, w)
		if !d.anyIn(start, period.End(start, w)) {
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

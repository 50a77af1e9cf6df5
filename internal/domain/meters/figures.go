package meters

import (
	"fmt"
	"time"

	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// figure is one figure being combined: a window's value for one account and group.
type figure struct {
	value     decimal.Decimal
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
	d, _ := decimal.ParseStored("1")
	return figure{value: d, has: true}
}()

// rowFigure is a usage row's own figure under agg.
func rowFigure(agg string, r *store.UsageRow) (figure, error) {
	if agg == models.AggCount {
		return unit, nil
	}
	v, err := decimal.ParseStored(r.MetricValue)
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
	v, err := decimal.ParseStored(k.Value)
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
	p.at(kind, period.Start(t, kind), accountID, groups, vals).total.combine(p.meter.Aggregation, f)
}

// addMinute folds f into the figure of the minute holding t, kept in its hour's slots.
func (p *pending) addMinute(t time.Time, accountID, groups string, vals [MaxGroupBy]*string, f *figure) {
	hour := period.Start(t, WindowHour)
	w := p.at(WindowHour, hour, accountID, groups, vals)
	w.slot(int(t.Sub(hour)/time.Minute)).combine(p.meter.Aggregation, f)
}

// save merges the changes into the kept figures and writes them back, in the
// transaction that holds the environment's usage cursor (so no other writes between).
// An hour's minutes are merged as text: only the minutes this transaction changed are
// decoded and encoded again, the others are copied as they were kept.
func (p *pending) save(tx *store.Tx) error {
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

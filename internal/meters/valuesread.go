package meters

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// reader reads the kept figures of a page in chunks, within the page's budget.
type reader struct {
	st Store
	b  *pageBuilder
	fq store.FigureQuery // meter, kind, account and filters; the range is set per read
}

// scan reads the figures of [from, to) after after (and up to until, when set), chunk by
// chunk, handing each to each. It says whether it read them all (false: the budget ran
// out, or each asked to stop).
func (rd *reader) scan(ctx context.Context, from, to time.Time, after, until *store.FigureKey, each func(k *models.MeterFigure) (bool, error)) (bool, error) {
	for {
		n := rd.b.budget()
		if n <= 0 {
			return false, nil
		}
		q := rd.fq
		q.From, q.To, q.After, q.Until, q.Limit = from, to, after, until, n
		kept, err := rd.st.MeterFigures(ctx, q)
		if err != nil {
			return false, err
		}
		rd.b.cost.Read += len(kept)
		for i := range kept {
			if more, err := each(&kept[i]); err != nil || !more {
				return false, err
			}
		}
		if len(kept) < n {
			return true, nil
		}
		last := &kept[len(kept)-1]
		after = &store.FigureKey{WindowStart: last.WindowStart, AccountID: last.AccountID, Groups: last.Groups}
	}
}

// readWindows builds a page of hour or longer windows: one read from the cursor to the end
// of the range. It returns where the next page starts when the budget ran out first.
func (rd *reader) readWindows(ctx context.Context) (*cursor, error) {
	b, c := rd.b, rd.b.after
	from, after := b.q.From, (*store.FigureKey)(nil)
	switch {
	case rd.fq.Kind != b.q.Window: // days into weeks or months: the cursor's window whole
		from = laterOf(from, c.WindowStart)
	case b.fold: // the cursor's account whole: its groups fold into its rows
		after = &store.FigureKey{WindowStart: c.WindowStart, AccountID: c.AccountID}
	default: // each figure is an answer row
		b.exact = true
		after = &store.FigureKey{WindowStart: c.WindowStart, AccountID: c.AccountID, Groups: c.Groups}
	}
	frontier := c
	done, err := rd.scan(ctx, from, b.q.To, after, nil, func(k *models.MeterFigure) (bool, error) {
		g := b.group(k.Groups)
		key := cursor{WindowStart: windowStart(k.WindowStart, b.q.Window), AccountID: k.AccountID, Groups: g.text}
		if err := b.add(key, g, func() (figure, error) { w, err := fromKept(k, false); return w.total, err }); err != nil {
			return false, err
		}
		// Nothing unread comes before the figure's key (no fold), its account's (a fold
		// of groups), or its window's (a fold of days).
		switch {
		case rd.fq.Kind != b.q.Window:
			frontier = cursor{WindowStart: key.WindowStart}
		case b.fold:
			frontier = cursor{WindowStart: key.WindowStart, AccountID: key.AccountID}
		default:
			frontier = key
		}
		b.emit(&frontier)
		return !b.full(), nil
	})
	if err != nil || done || b.full() {
		b.emitAll()
		return nil, err
	}
	if frontier.compare(&c) <= 0 {
		return nil, tooWide(b, rd.fq.Kind)
	}
	return &frontier, nil
}

// tooWide refuses a query one of whose answer rows folds more figures than a page reads.
func tooWide(b *pageBuilder, kind string) error {
	if kind != b.q.Window {
		return invalid("window", "One %s of this meter holds more than %d figures; narrow the query with account_id or filter, or use a smaller window.", b.q.Window, readBudget)
	}
	return invalid("group_by", "One account's %s of this meter holds more than %d figures; group_by more of the meter's keys, or narrow the query with filter.", b.q.Window, readBudget)
}

// readMinutes builds a page of minute windows from the hours' figures, hour by hour. An
// hour's figures come by series (account, group), its answer rows minute by minute, so
// the cursor's minute is answered as the hour is read (its rows come in order, each final
// at once), and the later minutes once the whole hour is read: first the series after the
// cursor, then the ones before it. Memory holds the rows of the page, never the hour.
func (rd *reader) readMinutes(ctx context.Context) (*cursor, error) {
	b, c := rd.b, rd.b.after
	first := windowStart(c.WindowStart, WindowHour)
	for h := first; h.Before(b.q.To); h = h.Add(time.Hour) {
		m, series := 0, store.FigureKey{WindowStart: h} // a later hour: whole, from its first minute
		if h.Equal(first) {
			m = int(c.WindowStart.Sub(h) / time.Minute)
			series.AccountID = c.AccountID
			if !b.fold {
				series.Groups = c.Groups
			}
		}
		frontier := cursor{WindowStart: minuteOf(h, m)}
		done, err := rd.scan(ctx, h, h.Add(time.Hour), &series, nil, func(k *models.MeterFigure) (bool, error) {
			if err := rd.addMinutes(k, m); err != nil {
				return false, err
			}
			frontier.AccountID = k.AccountID
			if !b.fold {
				frontier.Groups = k.Groups
			}
			b.emit(&frontier) // minute m of every series up to this one
			return !b.full(), nil
		})
		if err != nil || b.full() {
			return nil, err
		}
		if !done {
			if frontier.compare(&c) <= 0 {
				return nil, invalid("group_by", "One account's minute of this meter holds more than %d figures; group_by more of the meter's keys, or narrow the query with filter.", readBudget)
			}
			return &frontier, nil
		}
		// Minute m is whole; the series before the cursor add the later minutes.
		frontier = cursor{WindowStart: minuteOf(h, m+1)}
		b.emit(&frontier)
		if series.AccountID != "" {
			done, err = rd.scan(ctx, h, h.Add(time.Hour), &store.FigureKey{WindowStart: h}, &series, func(k *models.MeterFigure) (bool, error) {
				return true, rd.addMinutes(k, m+1)
			})
			if err != nil || b.full() {
				return nil, err
			}
			if !done {
				return &frontier, nil
			}
		}
		frontier = cursor{WindowStart: h.Add(time.Hour)}
		b.emit(&frontier)
		if b.full() {
			return nil, nil
		}
	}
	b.emitAll()
	return nil, nil
}

// addMinutes adds the minutes from `from` on of an hour's figure, each decoded only if its
// row is kept.
func (rd *reader) addMinutes(k *models.MeterFigure, from int) error {
	b := rd.b
	g := b.group(k.Groups)
	for rest := k.Slots; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ";")
		head, _, _ := strings.Cut(part, "=")
		minute, err := strconv.Atoi(head)
		if err != nil {
			return fmt.Errorf("kept figure of meter %s: minute figure %q", k.MeterID, part)
		}
		if minute < from {
			continue
		}
		key := cursor{WindowStart: minuteOf(k.WindowStart, minute), AccountID: k.AccountID, Groups: g.text}
		if err := b.add(key, g, func() (figure, error) { _, f, err := decodeSlot(part); return deref(f), err }); err != nil {
			return err
		}
	}
	return nil
}

func deref(f *figure) figure {
	if f == nil {
		return figure{}
	}
	return *f
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

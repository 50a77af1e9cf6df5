package meters

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// reader reads the kept figures of a page in chunks, within the page's budget.
type reader struct {
	st       Store
	b        *pageBuilder
	fq       store.FigureQuery // meter, kind, account and filters; the range is set per read
	frontier cursor            // every answer row up to it is final
	row      *cursor           // inOrder: the row the last figure went to
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

// readWindows builds a page of hour or day windows read from their own kind: one read
// from the cursor to the end of the range, in the store's order (window start, account,
// groups), which is the answer's order within an account too when inOrder. It returns
// where the next page starts when the budget ran out first.
func (rd *reader) readWindows(ctx context.Context) (*cursor, error) {
	b, c := rd.b, rd.b.after
	b.exact = !b.fold
	rd.frontier = c
	after := &store.FigureKey{WindowStart: c.WindowStart, AccountID: c.AccountID, Groups: b.seek(&c)}
	done, err := rd.scan(ctx, b.q.From, b.q.To, after, nil, rd.take)
	if err != nil || done || b.full() {
		b.emitAll()
		return nil, err
	}
	return rd.stop()
}

// take folds a figure into its answer row and moves the frontier on: nothing unread comes
// before the figure's key (each figure a row), before its row (inOrder: the rows before it
// are whole), or before its account (other folds).
func (rd *reader) take(k *models.MeterFigure) (bool, error) {
	b := rd.b
	g := b.group(k.Groups)
	key := cursor{WindowStart: period.Start(k.WindowStart, b.q.Window), AccountID: k.AccountID, Groups: g.text}
	if err := b.add(key, g, func() (figure, error) { w, err := fromKept(k, false); return w.total, err }); err != nil {
		return false, err
	}
	switch {
	case b.exact:
		rd.frontier = key
	case !b.inOrder:
		rd.frontier = cursor{WindowStart: key.WindowStart, AccountID: key.AccountID}
	default:
		if rd.row != nil && rd.row.compare(&key) != 0 {
			rd.frontier = *rd.row
		}
		rd.row = &key
	}
	b.emit(&rd.frontier)
	return !b.full(), nil
}

// stop is where the next page starts when the budget ran out: the frontier, or a refusal
// when the page could not make a single answer row final (see tooWide).
func (rd *reader) stop() (*cursor, error) {
	if rd.frontier.compare(&rd.b.after) <= 0 {
		return nil, tooWide(rd.b)
	}
	return &rd.frontier, nil
}

// tooWide refuses a query whose next answer row cannot be made final within a page's
// budget. What remains refused (CONTRACT §21, a single row over the budget):
//   - inOrder (no group_by fold, or the asked keys lead the meter's, or none is asked):
//     one answer row (window, account, asked group) folds more than the budget of figures
//     (its stored groups × days), less a week's or month's read-ahead (readDays);
//     without a fold of groups a row folds at most 31 day figures, so never;
//   - asked keys that do not lead the meter's (such as the second of two): an account's
//     answer rows interleave in its stored order, so its rows are final only once its whole
//     window is read: one account's window holding more than the budget of figures.
func tooWide(b *pageBuilder) error {
	switch {
	case !b.inOrder:
		return invalid("group_by", "One account's %s of this meter holds more than %d figures, and group_by %v does not start with the meter's first group_by key %q (its rows interleave in an account's figures); group_by a leading part of %v, or narrow the query with filter.",
			b.q.Window, readBudget, b.q.GroupBy, b.meter.GroupBy[0], b.meter.GroupBy)
	case b.fold:
		return invalid("group_by", "One answer row of this query folds more than %d figures; group_by more of the meter's keys, narrow the query with filter, or use a smaller window.", readBudget)
	}
	return invalid("window", "One answer row of this query folds more than %d figures; use a smaller window.", readBudget)
}

// readMinutes builds a page of minute windows from the hours' figures, hour by hour. An
// hour's figures come by series (account, group), its answer rows minute by minute, so
// the cursor's minute is answered as the hour is read (its rows come in order, each final
// at once), and the later minutes once the whole hour is read: first the series after the
// cursor, then the ones before it. Memory holds the rows of the page, never the hour.
func (rd *reader) readMinutes(ctx context.Context) (*cursor, error) {
	b, c := rd.b, rd.b.after
	first := period.Start(c.WindowStart, WindowHour)
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

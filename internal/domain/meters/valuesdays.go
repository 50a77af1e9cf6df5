package meters

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// readDays builds a page of weeks or months from the days' figures (CONTRACT §21). The
// store keeps days in the order (day, account, groups), but an answer row folds a series
// (account, groups) over the window's days: read in the store's order, a row would be
// final only at the end of its window, so one window would have to fit in a page. So each
// window is read as a merge of its days, each day a stream read in chunks along the index
// (an exact range: meter, kind, day, then series after a key), taken in series order: an
// answer row's figures then come together (inOrder; at most 31 without a fold of groups),
// and it is final as soon as the next row's first figure comes, so a page can end between
// any two rows. The cursor's window resumes from its series (seek) on every day; a later
// window is first found by one probe (its first figure) and its days by one probe each,
// so windows and days without figures cost nothing.
func (rd *reader) readDays(ctx context.Context) (*cursor, error) {
	b, c := rd.b, rd.b.after
	rd.frontier = c
	w := period.Start(c.WindowStart, b.q.Window)
	var days []*dayStream
	if c.AccountID != "" { // every day of the cursor's window, from the cursor's series on
		for d := w; d.Before(period.End(w, b.q.Window)); d = d.AddDate(0, 0, 1) {
			days = append(days, &dayStream{day: d, after: store.FigureKey{WindowStart: d, AccountID: c.AccountID, Groups: b.seek(&c)}})
		}
	}
	for {
		if days == nil {
			first, ok, err := rd.probe(ctx, w, b.q.To)
			if err != nil || !ok {
				return rd.stopDays(err, true)
			}
			if first == nil { // no figure is left in the range
				b.emitAll()
				return nil, nil
			}
			w = period.Start(first.WindowStart, b.q.Window)
			if days, ok, err = rd.openDays(ctx, w, first); err != nil || !ok {
				return rd.stopDays(err, true)
			}
		}
		done, err := rd.merge(ctx, days)
		if err != nil || b.full() || !done {
			return rd.stopDays(err, !done)
		}
		w, days, rd.row = period.End(w, b.q.Window), nil, nil
		rd.frontier = cursor{WindowStart: w} // the window's rows are whole
		b.emit(&rd.frontier)
		if b.full() {
			return nil, nil
		}
	}
}

// stopDays ends a page of readDays: on an error or a full page nothing more, and when the
// budget ran out first (short) at the frontier.
func (rd *reader) stopDays(err error, short bool) (*cursor, error) {
	if err != nil || rd.b.full() || !short {
		return nil, err
	}
	return rd.stop()
}

// dayStream is one day of a window: its figures read but not taken yet, in series order,
// and where its next read starts.
type dayStream struct {
	day   time.Time
	buf   []models.MeterFigure
	after store.FigureKey
	done  bool // nothing is left after buf
}

// dayChunk is how many figures a day's read takes: the window's days together read ahead
// at most a chunk, and at most an eighth of the budget, so that what a row may fold is
// nearly the whole budget.
func dayChunk(days int) int { return max(1, min(chunkRows, readBudget/8)/max(days, 1)) }

// probe reads the first figure of [from, to), if any; ok is false when the budget is spent.
func (rd *reader) probe(ctx context.Context, from, to time.Time) (*models.MeterFigure, bool, error) {
	if rd.b.budget() <= 0 {
		return nil, false, nil
	}
	q := rd.fq
	q.From, q.To, q.Limit = from, to, 1
	kept, err := rd.st.MeterFigures(ctx, q)
	if err != nil || len(kept) == 0 {
		return nil, err == nil, err
	}
	rd.b.cost.Read++
	return &kept[0], true, nil
}

// openDays is the days of the window w holding figures, first (w's first figure) read.
func (rd *reader) openDays(ctx context.Context, w time.Time, first *models.MeterFigure) ([]*dayStream, bool, error) {
	end := period.End(w, rd.b.q.Window)
	var days []*dayStream
	for f := first; f != nil; {
		days = append(days, &dayStream{day: f.WindowStart, buf: []models.MeterFigure{*f}, after: figureKeyOf(f)})
		var ok bool
		var err error
		if f, ok, err = rd.probe(ctx, f.WindowStart.AddDate(0, 0, 1), end); err != nil || !ok {
			return nil, false, err
		}
	}
	return days, true, nil
}

func figureKeyOf(f *models.MeterFigure) store.FigureKey {
	return store.FigureKey{WindowStart: f.WindowStart, AccountID: f.AccountID, Groups: f.Groups}
}

// fill reads a day's next chunk; false when the budget is spent.
func (rd *reader) fill(ctx context.Context, s *dayStream, chunk int) (bool, error) {
	n := min(chunk, rd.b.budget())
	if n <= 0 {
		return false, nil
	}
	q := rd.fq
	q.From, q.To, q.After, q.Limit = s.day, s.day.AddDate(0, 0, 1), &s.after, n
	kept, err := rd.st.MeterFigures(ctx, q)
	if err != nil {
		return false, err
	}
	rd.b.cost.Read += len(kept)
	s.buf, s.done = kept, len(kept) < n
	if len(kept) > 0 {
		s.after = figureKeyOf(&kept[len(kept)-1])
	}
	return true, nil
}

// merge takes the figures of a window's days in series order (then day), each day read
// ahead by a chunk. It says whether it took them all (false: the budget ran out, or the
// page is full).
func (rd *reader) merge(ctx context.Context, days []*dayStream) (bool, error) {
	chunk := dayChunk(len(days))
	for {
		var next *dayStream
		for _, s := range days {
			if len(s.buf) == 0 && !s.done {
				if ok, err := rd.fill(ctx, s, chunk); err != nil || !ok {
					return false, err
				}
			}
			if len(s.buf) > 0 && (next == nil || seriesCompare(&s.buf[0], &next.buf[0]) < 0) {
				next = s
			}
		}
		if next == nil {
			return true, nil
		}
		f := &next.buf[0]
		next.buf = next.buf[1:]
		if more, err := rd.take(f); err != nil || !more {
			return false, err
		}
	}
}

func seriesCompare(a, b *models.MeterFigure) int {
	return cmp.Or(strings.Compare(a.AccountID, b.AccountID), strings.Compare(a.Groups, b.Groups), a.WindowStart.Compare(b.WindowStart))
}

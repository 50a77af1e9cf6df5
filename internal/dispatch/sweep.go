package dispatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/revops/revops/models"
)

// sweep is one pass of a sweeper: every row list finds that is older than age, a batch
// at a time, oldest first, handed to start (CONTRACT §17: a start that fails fails only
// itself). A row whose start fails is set aside (holds) and the pass goes on past it, as
// past the rows still set aside; each list asks for as many more rows as the pass has
// passed over, so that a head of failing rows never hides the rows behind it. The pass
// stops at maxFailuresInRow failures in a row of rows that had not failed before
// (Temporal is likely away: each start would wait out its timeout; a row known to fail
// is no news); it returns the last failure when it started nothing and some failure was
// news.
type sweep[T any] struct {
	age   time.Duration
	holds *holds
	log   *slog.Logger
	what  string // what a row's start is, in a log line
	list  func(ctx context.Context, before time.Time, limit int) ([]T, error)
	start func(context.Context, T) error
	key   func(T) string // the row's key among the holds
	attrs func(T) []any  // what names the row in a log line
}

// run makes the pass and says how many rows it started.
func (s sweep[T]) run(ctx context.Context) (int, error) {
	done, passed, inRow := 0, map[string]bool{}, 0
	var (
		aside   setAsides
		lastErr error // the last failure that was news
	)
	defer func() { aside.log(s.log, s.what, done > 0) }()
	for {
		limit := sweepBatch + len(passed)
		rows, err := s.list(ctx, time.Now().UTC().Add(-s.age), limit)
		if err != nil {
			return done, err
		}
		started := 0
		for _, row := range rows {
			k := s.key(row)
			if passed[k] {
				continue
			}
			if s.holds.held(k) {
				passed[k] = true
				continue
			}
			if err := s.start(ctx, row); err != nil {
				passed[k] = true
				if aside.add(s.holds, k, err, s.attrs(row)) {
					inRow, lastErr = inRow+1, err
				}
				if inRow >= maxFailuresInRow || ctx.Err() != nil {
					return done, err
				}
				continue
			}
			s.holds.started(k)
			done, started, inRow = done+1, started+1, 0
		}
		// Nothing started in a whole list: the next would find the same rows.
		if len(rows) < limit || started == 0 || len(passed) >= maxHolds {
			if done > 0 {
				return done, nil
			}
			return done, lastErr
		}
	}
}

// setAsides are the starts of one pass (a claim, a sweep, a batch handed over) that
// failed and were set aside, logged once the pass knows whether Temporal started others:
// then each at Warn the first time it fails; when none started, at Debug (the caller logs
// a streak of Temporal away once).
type setAsides []setAside

type setAside struct {
	attrs   []any
	wait    time.Duration
	strikes int
	err     error
}

// add sets key aside in h after err, and says whether it is news: the start had not
// failed before (or could not be set aside). Failures that are news, in a row, say that
// Temporal is likely away; a start known to fail says nothing of the others.
func (a *setAsides) add(h *holds, key string, err error, attrs []any) (news bool) {
	wait, strikes := h.failed(key)
	*a = append(*a, setAside{attrs: attrs, wait: wait, strikes: strikes, err: err})
	return strikes <= 1
}

func (a setAsides) log(log *slog.Logger, what string, othersStarted bool) {
	if log == nil {
		log = slog.Default()
	}
	for _, s := range a {
		attrs := append(s.attrs, "failures_in_a_row", s.strikes, "retry_in", s.wait, "err", s.err)
		switch {
		case s.strikes == 0:
			log.Debug(what+" not started, and not set aside (too many are): tried again at the next poll", attrs...)
		case othersStarted && s.strikes == 1:
			log.Warn(what+" not started while others were; set aside, tried again after retry_in", attrs...)
		default:
			log.Debug(what+" not started; set aside", attrs...)
		}
	}
}

// eventAttrs name an event in a log line (ids, never its body).
func eventAttrs(e models.Event) []any {
	return []any{"event_id", e.ID, "organization_id", e.OrganizationID, "environment", e.Environment}
}

// eventSweep is a pass of the starter over the events list finds, each handed to start.
func (s *Starter) eventSweep(age time.Duration, list func(context.Context, time.Time, int) ([]models.Event, error), start func(context.Context, models.Event) error) sweep[models.Event] {
	return sweep[models.Event]{age: age, holds: &s.holds, log: s.log(), what: "webhook delivery", list: list, start: start,
		key: startKey, attrs: eventAttrs}
}

// Package clocktest keeps a test's steps clear of a UTC clock boundary (the turn of an
// hour or a day) that the code under test reads from the wall clock: usage windows, the
// alerts' current window, the alert-event cap per clock hour. A test that seeds data for
// "today" and then reads it back must not see the day turn in between.
package clocktest

import (
	"testing"
	"time"
)

// AwayFromBoundary waits, when a multiple of unit (an hour, a day: UTC, since the zero
// time is a UTC midnight) comes less than before ahead of now or passed less than after
// ago, until after past it. before is what the test needs to stay on one side; after
// is how far into the new unit it wants to start.
func AwayFromBoundary(t testing.TB, unit, before, after time.Duration) {
	t.Helper()
	now := time.Now().UTC()
	if d := waitFor(now, unit, before, after); d > 0 {
		t.Logf("%s: waiting %s, until %s past the turn of the %s", now.Format(time.TimeOnly), d.Round(time.Millisecond), after, unit)
		time.Sleep(d)
	}
}

// waitFor is how long AwayFromBoundary waits at now.
func waitFor(now time.Time, unit, before, after time.Duration) time.Duration {
	last := now.Truncate(unit)
	for _, b := range []time.Time{last, last.Add(unit)} {
		if now.After(b.Add(-before)) && now.Before(b.Add(after)) {
			return b.Add(after).Sub(now)
		}
	}
	return 0
}

// Package period is the calendar of Revops's figures, in UTC: the periods (a usage
// rollup's resolution, CONTRACT §5; a meter's or an endpoint's stats window, §18, §23)
// figures are counted in, their starts and ends, and the check of a query's range of
// windows. It is a foundation: every domain that counts by period uses it, none borrows
// another's.
package period

import (
	"fmt"
	"time"
)

// The periods, in UTC; week is ISO (it starts on Monday), month is the calendar's.
const (
	Minute = "minute"
	Hour   = "hour"
	Day    = "day"
	Week   = "week"
	Month  = "month"
)

// Valid tells whether w is one of the five periods.
func Valid(w string) bool {
	switch w {
	case Minute, Hour, Day, Week, Month:
		return true
	}
	return false
}

// Start is the start of the period w that contains t, in UTC.
func Start(t time.Time, w string) time.Time {
	t = t.UTC()
	switch w {
	case Minute:
		return t.Truncate(time.Minute)
	case Hour:
		return t.Truncate(time.Hour)
	case Day:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case Week:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return t // unreachable: callers let only the five periods through
}

// End is the end of the period w starting at start.
func End(start time.Time, w string) time.Time {
	switch w {
	case Minute:
		return start.Add(time.Minute)
	case Hour:
		return start.Add(time.Hour)
	case Day:
		return start.AddDate(0, 0, 1)
	case Week:
		return start.AddDate(0, 0, 7)
	default:
		return start.AddDate(0, 1, 0)
	}
}

// Fault is what is wrong with a query's range of windows: the parameter to name, and the
// sentence that says it (CONTRACT §4).
type Fault struct {
	Param, Message string
}

// CheckRange checks, as §18 words it (values and stats queries alike), that from and to
// fall on boundaries of the valid period w (UTC), that to is after from, and that they
// span at most max windows. It returns from and to in UTC, or the first fault.
func CheckRange(from, to time.Time, w string, max int) (time.Time, time.Time, *Fault) {
	from, to = from.UTC(), to.UTC()
	if start := Start(from, w); !start.Equal(from) {
		return from, to, fault("from", "from must be on a %s boundary (UTC), such as %s.", w, start.Format(time.RFC3339))
	}
	if start := Start(to, w); !start.Equal(to) {
		return from, to, fault("to", "to must be on a %s boundary (UTC), such as %s.", w, End(start, w).Format(time.RFC3339))
	}
	if !to.After(from) {
		return from, to, fault("to", "to must be after from.")
	}
	n := 0
	for t := from; t.Before(to); t = End(t, w) {
		if n++; n > max {
			return from, to, fault("to", "A query covers at most %d windows; this one covers more. Use a larger window or a shorter range.", max)
		}
	}
	return from, to, nil
}

func fault(param, format string, args ...any) *Fault {
	return &Fault{Param: param, Message: fmt.Sprintf(format, args...)}
}

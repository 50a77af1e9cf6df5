package meters

import (
	"time"

	"github.com/revops/revops/internal/domain/usage"
)

// windowStart is the start of t's window, in UTC (week: ISO, Monday; month: calendar):
// the period of the same name of usage summaries.
func windowStart(t time.Time, window string) time.Time { return usage.PeriodStart(t, window) }

// windowEnd is the end of the window starting at start.
func windowEnd(start time.Time, window string) time.Time {
	switch window {
	case WindowMinute:
		return start.Add(time.Minute)
	case WindowHour:
		return start.Add(time.Hour)
	case WindowDay:
		return start.AddDate(0, 0, 1)
	case WindowWeek:
		return start.AddDate(0, 0, 7)
	default:
		return start.AddDate(0, 1, 0)
	}
}

// validWindow tells whether w is a window of CONTRACT §18: the resolutions of §5.
func validWindow(w string) bool { return usage.ValidResolution(w) }

// keptKind is the kind of kept figure a window is read from: minutes from their hours'
// slots; unique_count keeps every other window (distinct counts do not add up); the
// others keep hours and days, and add days up into weeks and months.
func keptKind(window string, unique bool) string {
	switch {
	case window == WindowMinute:
		return WindowHour
	case unique || window == WindowHour:
		return window
	}
	return WindowDay
}

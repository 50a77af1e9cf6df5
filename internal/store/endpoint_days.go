package store

import (
	"time"
)

// DayStart is the midnight UTC that begins t's day.
func DayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

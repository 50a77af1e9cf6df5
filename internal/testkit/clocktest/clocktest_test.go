package clocktest

import (
	"testing"
	"time"
)

func TestWaitFor(t *testing.T) {
	day := 24 * time.Hour
	at := func(h, m, s int) time.Time { return time.Date(2026, 11, 28, h, m, s, 0, time.UTC) }
	for _, tc := range []struct {
		now  time.Time
		unit time.Duration
		want time.Duration
	}{
		{at(12, 0, 0), day, 0},                                                    // far from midnight
		{at(0, 4, 0), day, 0},                                                     // past the margin after
		{at(0, 0, 30), day, 30 * time.Second},                                     // inside it: to 00:01
		{at(23, 58, 0), day, 3 * time.Minute},                                     // before midnight: to 00:01
		{at(23, 56, 59), day, 0},                                                  // just outside the margin before
		{at(13, 59, 0), time.Hour, 2 * time.Minute},                               // the hour turns within it
		{time.Date(2026, 11, 28, 0, 0, 30, 0, time.FixedZone("x", 3600)), day, 0}, // 23:00:30 UTC: an hour from the UTC day's turn
	} {
		if got := waitFor(tc.now.UTC(), tc.unit, 3*time.Minute, time.Minute); got != tc.want {
			t.Errorf("at %v by %v: wait %v, want %v", tc.now, tc.unit, got, tc.want)
		}
	}
}

package meters

import (
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// TestWholeWindowsDropsTheLastWindowOfACutRead: a read cut at maxKeptRows keeps only the
// asked windows it read whole, so that no page shows a partial figure.
func TestWholeWindowsDropsTheLastWindowOfACutRead(t *testing.T) {
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // a Monday
	var kept []models.MeterFigure
	for i := range maxKeptRows + 5 {
		// Day rows: the first 10 on Monday, the rest spread over the week after.
		d := day
		if i >= 10 {
			d = day.AddDate(0, 0, 7+i%7)
		}
		kept = append(kept, models.MeterFigure{WindowStart: d})
	}
	got, cut := wholeWindows(kept, WindowWeek)
	if !cut || len(got) != 10 {
		t.Fatalf("cut %v, kept %d figures; want the first week's 10 only", cut, len(got))
	}
	if got, cut := wholeWindows(kept[:maxKeptRows], WindowWeek); cut || len(got) != maxKeptRows {
		t.Fatalf("a read that was not cut lost figures: cut %v, %d", cut, len(got))
	}
	oneWeek := append(kept[10:], kept[10:20]...) // over the bound, all in the second week
	if got, cut := wholeWindows(oneWeek, WindowWeek); !cut || len(got) != 0 {
		t.Fatalf("one window over the bound: cut %v, %d figures kept; want none (the request is refused)", cut, len(got))
	}
}

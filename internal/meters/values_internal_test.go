package meters

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/store"
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
	got, rest := wholeWindows(kept, WindowWeek)
	if !rest.Equal(day.AddDate(0, 0, 7)) || len(got) != 10 {
		t.Fatalf("rest at %v, kept %d figures; want the first week's 10 only, the rest from the second week", rest, len(got))
	}
	if got, rest := wholeWindows(kept[:maxKeptRows], WindowWeek); !rest.IsZero() || len(got) != maxKeptRows {
		t.Fatalf("a read that was not cut lost figures: rest %v, %d", rest, len(got))
	}
	oneWeek := append(kept[10:], kept[10:20]...) // over the bound, all in the second week
	if got, rest := wholeWindows(oneWeek, WindowWeek); rest.IsZero() || len(got) != 0 {
		t.Fatalf("one window over the bound: rest %v, %d figures kept; want none (the request is refused)", rest, len(got))
	}
}

// figureStore serves Values from figures in memory, ordered as the store orders them.
type figureStore struct {
	Store // the methods Values does not call
	meter models.Meter
	kept  []models.MeterFigure
}

func (f *figureStore) Meter(context.Context, store.Env, string) (models.Meter, error) {
	return f.meter, nil
}

func (f *figureStore) MeterAsOf(_ context.Context, _ models.Meter, now time.Time) (time.Time, error) {
	return now, nil
}

func (f *figureStore) MeterFigures(_ context.Context, q store.FigureQuery) ([]models.MeterFigure, error) {
	var out []models.MeterFigure
	for _, k := range f.kept {
		if a := q.After; a != nil && (k.WindowStart.Before(a.WindowStart) ||
			k.WindowStart.Equal(a.WindowStart) && k.AccountID+k.Groups <= a.AccountID+a.Groups) {
			continue
		}
		if !k.WindowStart.Before(q.From) && k.WindowStart.Before(q.To) && (q.Limit == 0 || len(out) < q.Limit) {
			out = append(out, k)
		}
	}
	return out, nil
}

// TestValuesPageAcrossCutReads walks every page of a day query whose windows together
// hold more figures than one read takes (10,000, then 45,000, then 10,000): every figure
// comes once, in order, and the walk does not stop at a cut.
func TestValuesPageAcrossCutReads(t *testing.T) {
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	// Grouped by region, asked without: figures fold, so reads are bounded, not paged in SQL.
	fs := &figureStore{meter: models.Meter{ID: "m", Key: "calls", Aggregation: models.AggSum, GroupBy: []string{"region"}}}
	for d, n := range []int{10000, 45000, 10000} {
		for i := range n {
			fs.kept = append(fs.kept, models.MeterFigure{MeterID: "m", Kind: WindowDay, WindowStart: day.AddDate(0, 0, d),
				AccountID: fmt.Sprintf("acct_%05d", i), Groups: `["eu"]`, Value: "1"})
		}
	}
	svc := &Service{Store: fs}
	q := ValuesQuery{From: day, To: day.AddDate(0, 0, 3), Window: WindowDay, Limit: MaxLimit}
	var got []Value
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the walk does not end")
		}
		page, err := svc.Values(context.Background(), store.Env{}, "calls", q, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Data...)
		if page.NextPage == "" {
			break
		}
		q.Page = page.NextPage
	}
	if len(got) != len(fs.kept) {
		t.Fatalf("%d values over every page, want %d", len(got), len(fs.kept))
	}
	for i, v := range got {
		if k := fs.kept[i]; !v.WindowStart.Equal(k.WindowStart) || v.AccountID != k.AccountID {
			t.Fatalf("value %d is %v %s, want %v %s", i, v.WindowStart, v.AccountID, k.WindowStart, k.AccountID)
		}
	}
}

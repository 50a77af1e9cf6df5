package meters

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// TestValuesWindowOverTheBudget: a week whose days hold more figures than a page reads
// cannot be answered (400 naming window); the week before it is answered whole, on a short
// page whose next_page is the week over the budget, never with a partial figure.
func TestValuesWindowOverTheBudget(t *testing.T) {
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // a Monday
	fs := &figureStore{meter: models.Meter{ID: "m", Key: "calls", Aggregation: models.AggSum}}
	for i := range readBudget + 10 {
		d := day // the first 10 on Monday, the rest spread over the week after
		if i >= 10 {
			d = day.AddDate(0, 0, 7+i%7)
		}
		fs.kept = append(fs.kept, models.MeterFigure{MeterID: "m", Kind: WindowDay, WindowStart: d,
			AccountID: fmt.Sprintf("acct_%06d", i), Groups: "[]", Value: "1"})
	}
	slices.SortFunc(fs.kept, compareKept)
	svc := &Service{Store: fs}
	q := ValuesQuery{From: day, To: day.AddDate(0, 0, 14), Window: WindowWeek, Limit: MaxLimit}
	page, err := svc.Values(context.Background(), store.Env{}, "calls", q, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 10 || page.NextPage == "" || page.Cost.Read > readBudget {
		t.Fatalf("first page: %d rows, next %q, read %d; want the first week's 10, a next page, at most %d read",
			len(page.Data), page.NextPage, page.Cost.Read, readBudget)
	}
	q.Page = page.NextPage
	_, err = svc.Values(context.Background(), store.Env{}, "calls", q, time.Now())
	var inv *apperr.InvalidError
	if !errors.As(err, &inv) || inv.Param != "window" {
		t.Fatalf("second page: %v; want parameter_invalid naming window", err)
	}
}

func compareKept(a, b models.MeterFigure) int {
	return cmp.Or(a.WindowStart.Compare(b.WindowStart), strings.Compare(a.AccountID, b.AccountID), strings.Compare(a.Groups, b.Groups))
}

func keyCompare(k *models.MeterFigure, f *store.FigureKey) int {
	return compareKept(*k, models.MeterFigure{WindowStart: f.WindowStart, AccountID: f.AccountID, Groups: f.Groups})
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
	for i := range f.kept {
		k := &f.kept[i]
		if k.Kind != q.Kind || k.WindowStart.Before(q.From) || !k.WindowStart.Before(q.To) ||
			q.After != nil && keyCompare(k, q.After) <= 0 || q.Until != nil && keyCompare(k, q.Until) > 0 {
			continue
		}
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
		out = append(out, *k)
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

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

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// TestValuesWeeksOverTheBudget: weeks whose days hold more figures than a page reads are
// answered in pages (CONTRACT §21): each page reads at most the budget and ends between
// two rows, and the pages together are every row once, each week's days added up.
func TestValuesWeeksOverTheBudget(t *testing.T) {
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // a Monday
	fs := &figureStore{meter: models.Meter{ID: "m", Key: "calls", Aggregation: models.AggSum}}
	want := map[string]int{}
	for i := range readBudget + 10 {
		d, a := day, fmt.Sprintf("acct_%05d", i) // the first 10 on Monday, the rest on the days of the week after
		if i >= 10 {
			d, a = day.AddDate(0, 0, 7+i%7), fmt.Sprintf("acct_%05d", i/7) // 7 days of an account
		}
		fs.kept = append(fs.kept, models.MeterFigure{MeterID: "m", Kind: WindowDay, WindowStart: d,
			AccountID: a, Groups: "[]", Value: "1"})
		want[period.Start(d, WindowWeek).Format(time.RFC3339)+" "+a]++
	}
	slices.SortFunc(fs.kept, compareKept)
	q := ValuesQuery{From: day, To: day.AddDate(0, 0, 14), Window: WindowWeek, Limit: MaxLimit}
	got, pages, err := walkInternal(&Queries{Store: fs}, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || pages < 2 {
		t.Fatalf("%d rows over %d pages, want %d rows over several pages", len(got), pages, len(want))
	}
	for i, v := range got {
		k := v.WindowStart.Format(time.RFC3339) + " " + v.AccountID
		prev, this := got[max(i-1, 0)].cursorOf(nil), v.cursorOf(nil)
		if v.Value != fmt.Sprint(want[k]) || i > 0 && prev.compare(&this) >= 0 {
			t.Fatalf("row %d: %s = %s, want %d, in order", i, k, v.Value, want[k])
		}
	}
}

// walkInternal reads every page of q, checking each page's bounds (CONTRACT §21).
func walkInternal(svc *Queries, q ValuesQuery) ([]Value, int, error) {
	var out []Value
	for pages := 1; ; pages++ {
		if pages > 1000 {
			return nil, 0, errors.New("the walk does not end")
		}
		page, err := svc.Values(context.Background(), models.Env{}, "calls", q, time.Now())
		if err != nil {
			return out, pages, err
		}
		if page.Cost.Read > readBudget || page.Cost.Built > q.Limit+1 {
			return nil, 0, fmt.Errorf("page %d read %d and built %d", pages, page.Cost.Read, page.Cost.Built)
		}
		out = append(out, page.Data...)
		if page.NextPage == "" {
			return out, pages, nil
		}
		q.Page = page.NextPage
	}
}

// TestValuesRowOverTheBudget: what stays refused (400 naming group_by) is a single answer
// row over the budget: with group_by region of a meter grouped by region and plan, one
// account's eu row folds more plans than a page reads; with group_by plan (not the
// meter's first key), one account's week holds more figures than a page reads. The same
// queries on the other accounts alone are answered in pages.
func TestValuesRowOverTheBudget(t *testing.T) {
	old := readBudget
	readBudget = 200
	t.Cleanup(func() { readBudget = old })
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	fs := &figureStore{meter: models.Meter{ID: "m", Key: "calls", Aggregation: models.AggSum, GroupBy: []string{"region", "plan"}}}
	add := func(a, region string, plan, d int) {
		fs.kept = append(fs.kept, models.MeterFigure{MeterID: "m", Kind: WindowDay, WindowStart: day.AddDate(0, 0, d),
			AccountID: a, Groups: fmt.Sprintf(`[%q,"p%03d"]`, region, plan), Value: "1"})
	}
	for p := range 150 { // acct_big: eu folds 300 figures, us none
		add("acct_big", "eu", p, 0)
		add("acct_big", "eu", p, 1)
	}
	for a := range 100 { // small accounts, one figure per region and day: 600 figures
		for d := range 3 {
			add(fmt.Sprintf("acct_%03d", a), "eu", a%5, d)
			add(fmt.Sprintf("acct_%03d", a), "us", a%5, d)
		}
	}
	slices.SortFunc(fs.kept, compareKept)
	svc := &Queries{Store: fs}
	for _, c := range []struct {
		gb         []string
		rows, mine int // rows before the refusal; acct_042's rows
		value      string
	}{{[]string{"region"}, 200, 2, "3"}, {[]string{"plan"}, 100, 1, "6"}} {
		gb := c.gb
		q := ValuesQuery{From: day, To: day.AddDate(0, 0, 7), Window: WindowWeek, GroupBy: gb, Limit: 7}
		got, _, err := walkInternal(svc, q)
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || inv.Param != "group_by" {
			t.Fatalf("group_by %v: %v; want parameter_invalid naming group_by", gb, err)
		}
		if len(got) != c.rows { // every small account's rows come first (acct_0… < acct_big)
			t.Fatalf("group_by %v: %d rows before the refusal, want %d", gb, len(got), c.rows)
		}
		q.AccountID = "acct_042"
		if got, _, err = walkInternal(svc, q); err != nil || len(got) != c.mine || got[0].Value != c.value {
			t.Fatalf("group_by %v of one small account: %d rows, %v", gb, len(got), err)
		}
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

func (f *figureStore) Meter(context.Context, models.Env, string) (models.Meter, error) {
	return f.meter, nil
}

func (f *figureStore) MeterAsOf(_ context.Context, _ models.Meter, now time.Time) (time.Time, error) {
	return now, nil
}

func (f *figureStore) MeterFigures(_ context.Context, q store.FigureQuery) ([]models.MeterFigure, error) {
	var out []models.MeterFigure
	for i := range f.kept {
		k := &f.kept[i]
		if k.Kind != q.Kind || q.AccountID != "" && k.AccountID != q.AccountID || k.WindowStart.Before(q.From) || !k.WindowStart.Before(q.To) ||
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
	svc := &Queries{Store: fs}
	q := ValuesQuery{From: day, To: day.AddDate(0, 0, 3), Window: WindowDay, Limit: MaxLimit}
	var got []Value
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the walk does not end")
		}
		page, err := svc.Values(context.Background(), models.Env{}, "calls", q, time.Now())
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

package meters_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// heldStore holds the first `hold` figure reads of one meter until release is closed,
// saying on entered when each began: queries caught in progress, without timing.
type heldStore struct {
	*store.Store
	meterID string
	mu      sync.Mutex
	hold    int
	entered chan struct{}
	release chan struct{}
}

func (h *heldStore) MeterFigures(ctx context.Context, q store.FigureQuery) ([]models.MeterFigure, error) {
	h.mu.Lock()
	held := q.MeterID == h.meterID && h.hold > 0
	if held {
		h.hold--
	}
	h.mu.Unlock()
	if held {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.Store.MeterFigures(ctx, q)
}

// newEnv is a fresh organization's live environment with one meter, calls, grouped by region.
func newEnv(t *testing.T, st *store.Store, svc *meters.Queries, name string) (models.Env, models.Meter) {
	t.Helper()
	ctx := context.Background()
	env := testdb.SeedOrg(t, st, name, name+"@example.com", "live")
	m, err := meterstest.Create(ctx, svc.Store, env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggSum,
		GroupBy: []string{"region"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return env, m
}

// wantMinutes is the reference of minutes [from, to) (minutes after f.Start) of f: every
// series' figure, or with fold each account's regions added up, in the answer's order.
func wantMinutes(f meterstest.MinuteFigures, from, to int, fold bool) []string {
	var out []string
	for t := from; t < to; t++ {
		h, m := t/60, t%60
		start := f.Start.Add(time.Duration(t) * time.Minute)
		for s := 0; s < f.Series; s += 3 {
			var sum decimal.Decimal
			has := false
			for r := s; r < s+3 && r < f.Series; r++ {
				if (r+m)%f.Every != 0 {
					continue
				}
				v, _ := decimal.ParseStored(meterstest.MinuteValue(r, h, m))
				if !fold {
					out = append(out, fmt.Sprintf("%s %s %q %s", start.Format(time.RFC3339), meterstest.Account(r), meterstest.Region(r), v.String()))
					continue
				}
				if has {
					v = sum.Add(&v)
				}
				sum, has = v, true
			}
			if fold && has {
				out = append(out, fmt.Sprintf("%s %s %q %s", start.Format(time.RFC3339), meterstest.Account(s), "", sum.String()))
			}
		}
	}
	return out
}

func lineOf(v meters.Value) string {
	region := ""
	if r := v.Group["region"]; r != nil {
		region = *r
	}
	return fmt.Sprintf("%s %s %q %s", v.WindowStart.UTC().Format(time.RFC3339), v.AccountID, region, v.Value)
}

// walk reads every page of q, checking each page's cost against its bounds (CONTRACT §21).
func walk(t *testing.T, svc *meters.Queries, env models.Env, q meters.ValuesQuery) ([]string, int, error) {
	var out []string
	most := 0
	for pages := 0; ; pages++ {
		p, err := svc.Values(context.Background(), env, "calls", q, time.Now())
		if err != nil {
			return nil, 0, err
		}
		if p.Cost.Built > q.Limit+1 || p.Cost.Read > 50000 {
			return nil, 0, fmt.Errorf("page %d built %d answer rows and read %d figures; at most %d and 50000", pages, p.Cost.Built, p.Cost.Read, q.Limit+1)
		}
		most = max(most, p.Cost.Read)
		for _, v := range p.Data {
			out = append(out, lineOf(v))
		}
		if p.NextPage == "" {
			return out, most, nil
		}
		q.Page = p.NextPage
	}
}

// TestHeavyMinuteValues is §21's heavy values case on PostgreSQL: environment A reads
// window=minute over 1,000 minutes of a meter with 3,000 series, four queries at once,
// paging through. Every page reads at most 50,000 figures and builds at most limit+1
// answer rows; the pages together are the reference exactly (none lost or repeated); while
// A's four queries are in progress, A's fifth is refused 429 and environment B's are
// answered.
func TestHeavyMinuteValues(t *testing.T) {
	ctx := context.Background()
	url := testdb.URL(t)
	st := testdb.Open(t, url)
	held := &heldStore{Store: st, hold: 4, entered: make(chan struct{}, 4), release: make(chan struct{})}
	svc := &meters.Queries{Store: held, MaxQueries: 4}
	envA, meterA := newEnv(t, st, svc, "heavy")
	envB, meterB := newEnv(t, st, svc, "light")
	held.meterID = meterA.ID
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	figA := meterstest.MinuteFigures{MeterID: meterA.ID, Start: start, Hours: 17, Series: 3000, Every: 20}
	figB := meterstest.MinuteFigures{MeterID: meterB.ID, Start: start, Hours: 1, Series: 6, Every: 1}
	for _, f := range []meterstest.MinuteFigures{figA, figB} {
		if err := f.Load(ctx, url); err != nil {
			t.Fatal(err)
		}
	}

	const quarter = 250
	got := make([][]string, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := meters.ValuesQuery{From: start.Add(time.Duration(i*quarter) * time.Minute), To: start.Add(time.Duration((i+1)*quarter) * time.Minute),
				Window: meters.WindowMinute, GroupBy: []string{"region"}, Limit: meters.MaxLimit}
			var most int
			got[i], most, errs[i] = walk(t, svc, envA, q)
			t.Logf("A's quarter %d: %d values, at most %d figures read by a page", i, len(got[i]), most)
		}()
	}
	for range 4 { // A's four queries are in progress (their first read held)
		<-held.entered
	}
	q := meters.ValuesQuery{From: start, To: start.Add(time.Hour), Window: meters.WindowMinute, GroupBy: []string{"region"}, Limit: 10}
	_, err := svc.Values(ctx, envA, "calls", q, time.Now())
	var busy *apperr.BusyError
	if !errors.As(err, &busy) || busy.Code != apperr.CodeRateLimited {
		t.Fatalf("A's fifth query: %v; want 429 rate_limited", err)
	}
	q.Limit = meters.MaxLimit
	gotB, _, err := walk(t, svc, envB, q)
	if err != nil {
		t.Fatalf("B's query while A's four run: %v", err)
	}
	if want := wantMinutes(figB, 0, 60, false); strings.Join(gotB, "\n") != strings.Join(want, "\n") {
		t.Fatalf("B's values: %d, want %d", len(gotB), len(want))
	}
	close(held.release)
	wg.Wait()

	var all []string
	for i := range 4 {
		if errs[i] != nil {
			t.Fatalf("A's quarter %d: %v", i, errs[i])
		}
		all = append(all, got[i]...)
	}
	compareLines(t, "A's minutes", all, wantMinutes(figA, 0, 4*quarter, false))

	// Without group_by, regions fold into each account's minute; filtered, nothing else
	// is read, and a filter that matches nothing reads nothing.
	q = meters.ValuesQuery{From: start, To: start.Add(3 * time.Hour), Window: meters.WindowMinute, Limit: 700}
	folded, _, err := walk(t, svc, envA, q)
	if err != nil {
		t.Fatal(err)
	}
	compareLines(t, "A's minutes without group_by", folded, wantMinutes(figA, 0, 180, true))
	q.Filters = map[string]string{"region": "nowhere"}
	p, err := svc.Values(ctx, envA, "calls", q, time.Now())
	if err != nil || len(p.Data) != 0 || p.Cost.Read != 0 {
		t.Fatalf("a filter that matches nothing: %d values, %d figures read, %v; want none read", len(p.Data), p.Cost.Read, err)
	}
	explainFilter(t, url, meterA.ID, start)
}

func compareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: value %d is %s, want %s", what, i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
}

// explainFilter: the chunk read of a filtered values page (store.MeterFigures' statement)
// is a range of meter_figures_g1 in the answer's order (migration 92): no sort, and no
// figure of another group read.
func explainFilter(t *testing.T, url, meterID string, start time.Time) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `EXPLAIN SELECT f.meter_id, f.slots FROM meter_figures AS f
		WHERE meter_id = $1 AND kind = 'hour' AND window_start >= $2 AND window_start < $3 AND g1 = 'r1'
		AND window_start >= $2 AND (window_start, account_id COLLATE "C", groups COLLATE "C") > ($2, 'acct_0100', '')
		ORDER BY window_start, account_id COLLATE "C", groups COLLATE "C" LIMIT 1000`,
		meterID, start, start.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "meter_figures_g1") || strings.Contains(text, "Sort") {
		t.Fatalf("the filtered read does not use meter_figures_g1 in order:\n%s", text)
	}
	t.Logf("filtered read:\n%s", text)
}

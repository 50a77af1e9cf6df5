// Package meterstest helps the end-to-end meter tests (internal/testkit/e2e on the dev shape,
// internal/testkit/prodlike on the production shape): a feed of usage batches sent while a test
// creates meters, and the comparison of a meter's every value, at every window size,
// with meters.Reference over the stored raw rows.
package meterstest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Metric is the metric name of the rows meters count; a batch also holds rows of
// another metric, which no meter counts.
const Metric = "calls"

// Post sends one POST /v1/usage/events body and returns once it was accepted (201).
type Post func(ctx context.Context, body []byte) error

// Feed sends batches of usage rows one after another from a goroutine, as a client
// keeps reporting usage while meters are created and backfilled.
type Feed struct {
	matching atomic.Int64 // accepted rows of Metric
	batches  atomic.Int64
	pause    atomic.Int64 // between batches, in nanoseconds
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	last     time.Time // when the latest batch was accepted
	err      error
}

// StartFeed starts sending batches of size rows, pause apart (SetPause changes it), made
// from seed and now (timestamps spread over the 34 days before now, half of them in the
// last 15 hours).
func StartFeed(ctx context.Context, post Post, size int, pause time.Duration, seed uint64, now time.Time) *Feed {
	f := &Feed{stop: make(chan struct{}), done: make(chan struct{})}
	f.SetPause(pause)
	go func() {
		defer close(f.done)
		r := rand.New(rand.NewPCG(seed, 1))
		for n := 0; ; n++ {
			select {
			case <-f.stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			body, matching := Batch(r, fmt.Sprintf("feed-%d-%d", seed, n), size, now)
			if err := post(ctx, body); err != nil {
				f.mu.Lock()
				f.err = fmt.Errorf("batch %d: %w", n, err)
				f.mu.Unlock()
				return
			}
			f.mu.Lock()
			f.last = time.Now()
			f.mu.Unlock()
			f.matching.Add(int64(matching))
			f.batches.Add(1)
			time.Sleep(time.Duration(f.pause.Load()))
		}
	}()
	return f
}

// SetPause changes the pause between batches: a test fills the database fast, then keeps
// rows coming at a pace the meters' consumer follows.
func (f *Feed) SetPause(d time.Duration) { f.pause.Store(int64(d)) }

// Matching is how many accepted rows have the metered metric so far.
func (f *Feed) Matching() int64 { return f.matching.Load() }

// Batches is how many batches were accepted so far.
func (f *Feed) Batches() int64 { return f.batches.Load() }

// Err is the failure that stopped the feed, if any.
func (f *Feed) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Stop stops the feed after the batch in flight and says when its last batch was
// accepted: every row is counted in a values answer whose as_of is past it.
func (f *Feed) Stop() (time.Time, error) {
	close(f.stop)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.err
}

// Batch is a POST /v1/usage/events body of n rows and how many of them are of Metric:
// four accounts, two products, metadata region (sometimes absent, sometimes a number
// written two ways) and user (a unique_count's value), a value with decimals.
func Batch(r *rand.Rand, txID string, n int, now time.Time) ([]byte, int) {
	metrics := make([]map[string]any, n)
	matching := 0
	for i := range metrics {
		ts := now.Add(-time.Duration(r.IntN(34*24*3600)) * time.Second)
		if r.IntN(2) == 0 { // minute windows see these
			ts = now.Add(-time.Duration(r.IntN(15*3600)) * time.Second)
		}
		meta := map[string]any{"user": fmt.Sprintf("u%d", r.IntN(200))}
		switch r.IntN(5) {
		case 0: // absent: grouped under null
		case 1:
			meta["region"] = json.RawMessage(`1.0`) // one value with "1"
		case 2:
			meta["region"] = "1"
		default:
			meta["region"] = []string{"eu", "us"}[r.IntN(2)]
		}
		name := Metric
		if r.IntN(5) == 0 {
			name = "other"
		} else {
			matching++
		}
		metrics[i] = map[string]any{
			"account_id": fmt.Sprintf("acct_%d", r.IntN(4)), "product": []string{"api", "seats"}[r.IntN(2)],
			"metric_name": name, "metric_value": json.RawMessage(fmt.Sprintf("%d.%02d", r.IntN(1000), r.IntN(100))),
			"metric_resolution": "minute", "metadata": meta, "timestamp": ts.Unix(),
		}
	}
	b, _ := json.Marshal(map[string]any{"transaction_id": txID, "mode": "increment", "event_metrics": metrics})
	return b, matching
}

// Ranges are the query ranges of each window size around now, each within
// meters.MaxWindows windows and covering every row Batch makes.
func Ranges(now time.Time) map[string][2]time.Time {
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC) }
	monday := func(t time.Time) time.Time { d := day(t); return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7)) }
	month := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) }
	now = now.UTC()
	early := now.AddDate(0, 0, -36)
	return map[string][2]time.Time{
		meters.WindowMinute: {now.Add(-15 * time.Hour).Truncate(time.Minute), now.Add(time.Minute).Truncate(time.Minute)},
		meters.WindowHour:   {early.Truncate(time.Hour), now.Add(time.Hour).Truncate(time.Hour)},
		meters.WindowDay:    {day(early), day(now).AddDate(0, 0, 1)},
		meters.WindowWeek:   {monday(early), monday(now).AddDate(0, 0, 7)},
		meters.WindowMonth:  {month(early), month(now).AddDate(0, 1, 0)},
	}
}

// Values answers one values query of a meter: meters.Queries.Values in the test's
// process (ServiceValues) or GET /v1/meters/{key}/values (HTTPValues).
type Values func(ctx context.Context, key string, q meters.ValuesQuery) (meters.ValuesPage, error)

// ServiceValues reads values through svc in env.
func ServiceValues(svc *meters.Queries, env models.Env) Values {
	return func(ctx context.Context, key string, q meters.ValuesQuery) (meters.ValuesPage, error) {
		return svc.Values(ctx, env, key, q, time.Now())
	}
}

// Get GETs a path of the API and decodes its 200 answer into into.
type Get func(ctx context.Context, path string, into any) error

// HTTPValues reads values through the API (CONTRACT §18's query and answer).
func HTTPValues(get Get) Values {
	return func(ctx context.Context, key string, q meters.ValuesQuery) (meters.ValuesPage, error) {
		params := url.Values{"from": {q.From.UTC().Format(time.RFC3339)}, "to": {q.To.UTC().Format(time.RFC3339)},
			"window": {q.Window}, "limit": {strconv.Itoa(max(q.Limit, 1))}}
		if len(q.GroupBy) > 0 { // omitted: no grouping beyond account_id
			params.Set("group_by", strings.Join(q.GroupBy, ","))
		}
		if q.Page != "" {
			params.Set("page", q.Page)
		}
		for k, v := range q.Filters {
			params.Set("filter["+k+"]", v)
		}
		var ans struct {
			AsOf time.Time `json:"as_of"`
			Data []struct {
				WindowStart time.Time          `json:"window_start"`
				WindowEnd   time.Time          `json:"window_end"`
				AccountID   string             `json:"account_id"`
				Group       map[string]*string `json:"group"`
				Value       json.Number        `json:"value"`
			} `json:"data"`
			NextPage *string `json:"next_page"`
		}
		if err := get(ctx, "/v1/meters/"+url.PathEscape(key)+"/values?"+params.Encode(), &ans); err != nil {
			return meters.ValuesPage{}, err
		}
		page := meters.ValuesPage{AsOf: ans.AsOf, Data: make([]meters.Value, len(ans.Data))}
		for i, v := range ans.Data {
			page.Data[i] = meters.Value{WindowStart: v.WindowStart, WindowEnd: v.WindowEnd, AccountID: v.AccountID,
				Group: v.Group, Value: v.Value.String()}
		}
		if ans.NextPage != nil {
			page.NextPage = *ans.NextPage
		}
		return page, nil
	}
}

// WaitAsOf waits until the meter's values answer says every row accepted before after
// is counted (as_of past it), within bound.
func WaitAsOf(t testing.TB, values Values, key string, after time.Time, bound time.Duration) {
	t.Helper()
	now := time.Now().UTC()
	q := meters.ValuesQuery{From: now.Truncate(time.Hour), To: now.Truncate(time.Hour).Add(time.Hour), Window: meters.WindowHour, Limit: 1}
	began := time.Now()
	deadline, report := began.Add(bound), began.Add(10*time.Second)
	for {
		page, err := values(context.Background(), key, q)
		if err != nil {
			t.Fatalf("values of %s: %v", key, err)
		}
		if page.AsOf.After(after) {
			t.Logf("meter %s: as_of past the last batch %s after it was accepted", key, time.Since(after).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("meter %s: as_of %v still before the last batch %v after %s", key, page.AsOf, after, bound)
		}
		if time.Now().After(report) {
			t.Logf("meter %s: as_of %s before the last batch", key, after.Sub(page.AsOf).Round(time.Millisecond))
			report = report.Add(10 * time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// PageLimit is the limit of Check's values queries: a test of few rows lowers it, so that
// its answers take many pages.
var PageLimit = meters.MaxLimit

// Check compares every value of m at every window size (Ranges around now), with its
// group_by, without, and by its first key alone, with and without a filter on that key,
// with meters.Reference over rows, and says how many values it compared. Every values
// answer must say that everything accepted before asOf is counted.
func Check(t testing.TB, values Values, m models.Meter, rows []store.UsageRow, now, asOf time.Time) int {
	t.Helper()
	subsets := [][]string{m.GroupBy}
	if m.Aggregation != models.AggUniqueCount && len(m.GroupBy) > 0 {
		// Distinct counts do not add up: unique_count answers its own group_by only.
		subsets = append(subsets, nil, m.GroupBy[:1])
	}
	compared := 0
	for window, r := range Ranges(now) {
		all, err := meters.Reference(m, rows, window, r[0], r[1], m.GroupBy, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 {
			t.Fatalf("meter %s %s: the reference has no rows", m.Key, window)
		}
		filters := []map[string]string{nil}
		if len(m.GroupBy) > 0 {
			for _, v := range all { // a value the data has, so that the filter keeps something
				if g := v.Group[m.GroupBy[0]]; g != nil {
					filters = append(filters, map[string]string{m.GroupBy[0]: *g})
					break
				}
			}
		}
		for _, gb := range subsets {
			for _, f := range filters {
				q := meters.ValuesQuery{From: r[0], To: r[1], Window: window, GroupBy: gb, Filters: f, Limit: PageLimit}
				got := allValues(t, values, m.Key, q, asOf)
				want, err := meters.Reference(m, rows, window, r[0], r[1], gb, f)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := flatten(got), flatten(want); !reflect.DeepEqual(g, w) {
					t.Fatalf("meter %s (%s) window %s group_by %v filter %v: %d values, want %d; first difference: %s",
						m.Key, m.Aggregation, window, gb, f, len(g), len(w), firstDiff(g, w))
				}
				compared += len(want)
			}
		}
	}
	return compared
}

// allValues reads every page of q.
func allValues(t testing.TB, values Values, key string, q meters.ValuesQuery, asOf time.Time) []meters.Value {
	t.Helper()
	var out []meters.Value
	for {
		page, err := values(context.Background(), key, q)
		if err != nil {
			t.Fatalf("values of %s %+v: %v", key, q, err)
		}
		if page.AsOf.Before(asOf) {
			t.Fatalf("values of %s: as_of %v is before %v although everything is counted", key, page.AsOf, asOf)
		}
		out = append(out, page.Data...)
		if page.NextPage == "" {
			return out
		}
		q.Page = page.NextPage
	}
}

// flatten writes each value as one comparable line (a group without keys is {}, whether
// the answer had an empty map or none).
func flatten(vs []meters.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		if v.Group == nil {
			v.Group = map[string]*string{}
		}
		g, _ := json.Marshal(v.Group)
		out[i] = fmt.Sprintf("%s..%s %s %s = %s", v.WindowStart.UTC().Format(time.RFC3339), v.WindowEnd.UTC().Format(time.RFC3339),
			v.AccountID, g, v.Value)
	}
	return out
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("got %s, want %s", got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return "extra " + got[len(want)]
	}
	return "missing " + want[len(got)]
}

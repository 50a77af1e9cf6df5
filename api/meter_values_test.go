package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
)

// The values query is checked at the edge, every fault at once, each naming its parameter.
func TestMeterValuesParameters(t *testing.T) {
	h := newHarness(t)
	h.mustObj(http.StatusCreated, "POST", "/v1/meters", meterBody("calls"))
	const ok = "from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&window=day"
	for _, c := range []struct{ query, faults string }{
		{"to=2026-11-02T00:00:00Z&window=day", "from:parameter_missing"},
		{"from=yesterday&to=2026-11-02T00:00:00Z&window=day", "from:parameter_invalid"},
		{"from=1761955200&to=2026-11-02T00:00:00Z&window=day", "from:parameter_invalid"},
		{"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z", "window:parameter_missing"},
		{"from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&window=year", "window:parameter_invalid"},
		{ok + "&limit=0", "limit:parameter_invalid"},
		{ok + "&limit=1001", "limit:parameter_invalid"},
		{ok + "&limit=ten", "limit:parameter_invalid"},
		{ok + "&group_by=region,,plan", "group_by:parameter_invalid"},
		{ok + "&group_by=", "group_by:parameter_invalid"},
		{ok + "&group_by=region,region", "group_by:parameter_invalid"},
		{ok + "&account_id=" + strings.Repeat("a", 256), "account_id:parameter_invalid"},
		{ok + "&filter[region]=", "filter[region]:parameter_invalid"},
		{ok + "&filter[region]=eu&filter[region]=us", "filter[region]:parameter_invalid"},
		{ok + "&filter[]=eu", "filter[]:parameter_invalid"},
		{ok + "&filter[region=eu", "filter[region:parameter_invalid"},
		{ok + "&page=" + strings.Repeat("p", 1001), "page:parameter_invalid"},
		{"window=fortnight&limit=0&group_by=a,", "from:parameter_missing to:parameter_missing window:parameter_invalid group_by:parameter_invalid limit:parameter_invalid"},
	} {
		r := h.do("GET", "/v1/meters/calls/values?"+c.query, h.key[skSandbox], nil)
		if r.Status != http.StatusBadRequest || faultsOf(t, r) != c.faults {
			t.Errorf("%s: %d, faults %q; want 400 %q: %s", c.query, r.Status, faultsOf(t, r), c.faults, r.Body)
		}
	}
	// A value no filter can hold is refused before anything else (CONTRACT §15).
	expectError(t, h.do("GET", "/v1/meters/calls/values?"+ok+"&filter[region]=%00", h.key[skSandbox], nil), http.StatusBadRequest, "parameter_invalid")
}

// usageRow is one metric of a usage batch for the values test.
func usageRow(account, region string, value any, ts time.Time) map[string]any {
	return map[string]any{"account_id": account, "product": "platform", "metric_name": "api_calls", "metric_value": value,
		"metric_resolution": "day", "metadata": map[string]any{"region": region}, "timestamp": ts.Format(time.RFC3339)}
}

// valuesWhenCounted runs the meter consumer and the meter's backfill (the harness has no
// worker) until the meter is ready and its values' as_of has passed after, then answers
// the values query.
func valuesWhenCounted(t *testing.T, h *harness, key, query string, after time.Time) map[string]any {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := meterstest.Consume(ctx, h.store); err != nil {
			t.Fatal(err)
		}
		m := h.mustObj(http.StatusOK, "GET", "/v1/meters/"+key, nil)
		if m["status"] == "backfilling" {
			if _, _, err := meters.BackfillPage(ctx, h.store, m["id"].(string), time.Now()); err != nil {
				t.Fatal(err)
			}
			continue
		}
		v := h.mustObj(http.StatusOK, "GET", "/v1/meters/"+key+"/values?"+query, nil)
		asOf, err := time.Parse(time.RFC3339Nano, v["as_of"].(string))
		if err != nil {
			t.Fatalf("as_of: %v", err)
		}
		if asOf.After(after) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("as_of %s never passed %s", asOf, after)
		}
	}
}

// valueRows renders data as "account group value" lines for comparison.
func valueRows(v map[string]any) string {
	var out []string
	for _, d := range v["data"].([]any) {
		r := d.(map[string]any)
		out = append(out, fmt.Sprint(r["account_id"], " ", r["group"], " ", r["value"]))
	}
	return strings.Join(out, "; ")
}

// A meter counts usage accepted before it (its backfill) and after it (the consumer);
// the values answer reads them per window, grouped, filtered and paged.
func TestMeterValuesThroughTheAPI(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		ts := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
		day := ts.Truncate(24 * time.Hour)
		ingest := func(tx string, rows ...any) time.Time {
			r := h.mustObj(http.StatusCreated, "POST", "/v1/usage/events", map[string]any{"transaction_id": tx, "mode": "increment", "event_metrics": rows})
			at, err := time.Parse(time.RFC3339Nano, r["received_at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
		ingest("before", usageRow("globex", "eu", 1200, ts), usageRow("globex", "us", 800, ts), usageRow("initech", "eu", 0.5, ts))
		// The consumer takes that batch while no meter exists: the meter backfills it.
		if _, err := meterstest.Consume(context.Background(), h.store); err != nil {
			t.Fatal(err)
		}
		m := h.mustObj(http.StatusCreated, "POST", "/v1/meters", map[string]any{"key": "api_calls",
			"filter": map[string]any{"metric_name": "api_calls"}, "aggregation": "sum", "group_by": []any{"region"}})
		if m["status"] != "backfilling" {
			t.Fatalf("a meter created after counted usage: %v", m)
		}
		last := ingest("after", usageRow("globex", "eu", 100, ts), usageRow("globex", "eu", 0.25, ts.Add(-24*time.Hour)))

		window := fmt.Sprintf("window=day&from=%s&to=%s", day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339))
		v := valuesWhenCounted(t, h, "api_calls", window+"&group_by=region", last)
		if v["object"] != "meter_values" || v["meter"] != "api_calls" || v["window"] != "day" || v["has_more"] != false || v["next_page"] != nil {
			t.Fatalf("answer %v", v)
		}
		if got, want := valueRows(v), "globex map[region:eu] 1300; globex map[region:us] 800; initech map[region:eu] 0.5"; got != want {
			t.Fatalf("by region:\n got %s\nwant %s", got, want)
		}
		first := v["data"].([]any)[0].(map[string]any)
		if first["window_start"] != day.Format(time.RFC3339) || first["window_end"] != day.Add(24*time.Hour).Format(time.RFC3339) {
			t.Fatalf("window %v", first)
		}
		if h.mustObj(http.StatusOK, "GET", "/v1/meters/api_calls", nil)["status"] != "ready" {
			t.Fatal("the meter is still backfilling")
		}
		for _, c := range []struct{ query, want string }{
			{window, "globex map[] 2100; initech map[] 0.5"},
			{window + "&account_id=initech", "initech map[] 0.5"},
			{window + "&filter[region]=eu", "globex map[] 1300; initech map[] 0.5"},
			{window + "&filter[region]=eu&group_by=region&account_id=globex", "globex map[region:eu] 1300"},
			// The late row of the day before lands in its own window.
			{fmt.Sprintf("window=day&from=%s&to=%s", day.Add(-24*time.Hour).Format(time.RFC3339), day.Format(time.RFC3339)), "globex map[] 0.25"},
		} {
			if got := valueRows(h.mustObj(http.StatusOK, "GET", "/v1/meters/api_calls/values?"+c.query, nil)); got != c.want {
				t.Errorf("%s:\n got %s\nwant %s", c.query, got, c.want)
			}
		}

		// Pages of one row, followed with next_page until it is null.
		var rows []string
		query := window + "&group_by=region&limit=1"
		for page := 0; ; page++ {
			p := h.mustObj(http.StatusOK, "GET", "/v1/meters/api_calls/values?"+query, nil)
			rows = append(rows, valueRows(p))
			next, _ := p["next_page"].(string)
			if (next != "") != (p["has_more"] == true) || page > 3 {
				t.Fatalf("page %d: %v", page, p)
			}
			if next == "" {
				break
			}
			query = window + "&group_by=region&limit=1&page=" + url.QueryEscape(next)
		}
		if got := strings.Join(rows, "; "); got != "globex map[region:eu] 1300; globex map[region:us] 800; initech map[region:eu] 0.5" {
			t.Fatalf("pages: %s", got)
		}

		// The meter's own checks answer 400 naming the parameter.
		for _, c := range []struct{ query, param string }{
			{"window=day&from=" + day.Add(time.Hour).Format(time.RFC3339) + "&to=" + day.Add(24*time.Hour).Format(time.RFC3339), "from"},
			{window + "&group_by=plan", "group_by"},
			{window + "&filter[plan]=pro", "filter[plan]"},
			{window + "&page=garbage", "page"},
		} {
			r := h.do("GET", "/v1/meters/api_calls/values?"+c.query, h.key[skSandbox], nil)
			expectError(t, r, http.StatusBadRequest, "parameter_invalid")
			if p := r.json(t)["error"].(map[string]any)["param"]; p != c.param {
				t.Errorf("%s: param %v, want %s", c.query, p, c.param)
			}
		}

		h.mustObj(http.StatusOK, "DELETE", "/v1/meters/api_calls", nil)
		expectError(t, h.do("GET", "/v1/meters/api_calls/values?"+window, h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
	})
}

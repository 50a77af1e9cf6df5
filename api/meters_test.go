package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/meters"
)

// meterBody is a valid create body for key.
func meterBody(key string) map[string]any {
	return map[string]any{"key": key, "filter": map[string]any{"metric_name": "calls"}, "aggregation": "sum"}
}

// onBothDatabases runs fn on a fresh harness over PostgreSQL and over SQLite (CONTRACT §15).
func onBothDatabases(t *testing.T, fn func(t *testing.T, h *harness)) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) { fn(t, newHarnessOn(t, db)) })
	}
}

func TestMeterCRUD(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		m := h.mustObj(http.StatusCreated, "POST", "/v1/meters", map[string]any{
			"key": "api_calls", "description": "API calls by region", "filter": map[string]any{"metric_name": "calls", "product": "api"},
			"aggregation": "sum", "group_by": []any{"region"},
		})
		want := []string{"id", "object", "key", "description", "filter", "aggregation", "value_key", "group_by", "status", "created_at", "updated_at"}
		if len(m) != len(want) {
			t.Fatalf("keys %v, want %v", m, want)
		}
		for _, k := range want {
			if _, ok := m[k]; !ok {
				t.Fatalf("no %s in %v", k, m)
			}
		}
		f, _ := m["filter"].(map[string]any)
		if m["object"] != "meter" || m["key"] != "api_calls" || f["metric_name"] != "calls" || f["product"] != "api" ||
			m["value_key"] != nil || fmt.Sprint(m["group_by"]) != "[region]" || m["status"] != "ready" {
			t.Fatalf("meter %v", m)
		}
		checkObjTimes(t, m)

		// Absent product and value_key are null, an absent group_by an empty list.
		u := h.mustObj(http.StatusCreated, "POST", "/v1/meters", map[string]any{"key": "users",
			"filter": map[string]any{"metric_name": "logins"}, "aggregation": "unique_count", "value_key": "user"})
		if f, _ := u["filter"].(map[string]any); f["product"] != nil || u["value_key"] != "user" || fmt.Sprint(u["group_by"]) != "[]" || u["description"] != "" {
			t.Fatalf("meter %v", u)
		}

		if got := h.mustObj(http.StatusOK, "GET", "/v1/meters/api_calls", nil); fmt.Sprint(got) != fmt.Sprint(m) {
			t.Fatalf("GET %v, want %v", got, m)
		}
		p := h.mustObj(http.StatusOK, "PATCH", "/v1/meters/api_calls", map[string]any{"description": "Calls"})
		if p["description"] != "Calls" || p["id"] != m["id"] || p["aggregation"] != "sum" || fmt.Sprint(p["filter"]) != fmt.Sprint(m["filter"]) {
			t.Fatalf("PATCH %v", p)
		}
		r := h.do("PATCH", "/v1/meters/api_calls", h.key[skSandbox], map[string]any{"description": "x", "aggregation": "max"})
		expectError(t, r, http.StatusBadRequest, "parameter_read_only")
		if got := h.mustObj(http.StatusOK, "GET", "/v1/meters/api_calls", nil); got["description"] != "Calls" || got["aggregation"] != "sum" {
			t.Fatalf("a refused PATCH changed the meter: %v", got)
		}
		cleared := h.mustObj(http.StatusOK, "PATCH", "/v1/meters/api_calls", map[string]any{"description": nil})
		if cleared["description"] != "" {
			t.Fatalf("description not cleared: %v", cleared)
		}

		d := h.mustObj(http.StatusOK, "DELETE", "/v1/meters/api_calls", nil)
		if len(d) != 3 || d["id"] != m["id"] || d["object"] != "meter" || d["deleted"] != true {
			t.Fatalf("DELETE %v", d)
		}
		for _, c := range [][2]string{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}} {
			var body any
			if c[0] == "PATCH" {
				body = map[string]any{"description": "x"}
			}
			expectError(t, h.do(c[0], "/v1/meters/api_calls"+c[1], h.key[skSandbox], body), http.StatusNotFound, "resource_missing")
		}
		// A path that cannot be a key is not looked up (CONTRACT §15).
		expectError(t, h.do("GET", "/v1/meters/API%20Calls", h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
		// Environments do not see each other's meters.
		expectError(t, h.do("GET", "/v1/meters/users", h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
	})
}

func TestMetersListed(t *testing.T) {
	h := newHarness(t)
	for _, k := range []string{"a", "b", "c"} {
		h.mustObj(http.StatusCreated, "POST", "/v1/meters", meterBody(k))
	}
	page := h.mustObj(http.StatusOK, "GET", "/v1/meters?limit=2", nil)
	data := page["data"].([]any)
	if page["object"] != "list" || len(data) != 2 || page["has_more"] != true || data[0].(map[string]any)["key"] != "c" {
		t.Fatalf("page 1 %v", page)
	}
	last := data[1].(map[string]any)["id"].(string)
	page = h.mustObj(http.StatusOK, "GET", "/v1/meters?limit=2&starting_after="+last, nil)
	if data := page["data"].([]any); len(data) != 1 || page["has_more"] != false || data[0].(map[string]any)["key"] != "a" {
		t.Fatalf("page 2 %v", page)
	}
	expectError(t, h.do("GET", "/v1/meters?limit=101", h.key[skSandbox], nil), http.StatusBadRequest, "parameter_invalid")
	if l := h.do("GET", "/v1/meters", h.key["secret live"], nil).json(t); len(l["data"].([]any)) != 0 {
		t.Fatalf("live lists sandbox meters: %v", l)
	}
}

// faultsOf lists "param:code" of every fault of an error answer, in order.
func faultsOf(t *testing.T, r response) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	errs, _ := e["errors"].([]any)
	out := make([]string, len(errs))
	for i, f := range errs {
		m := f.(map[string]any)
		out[i] = fmt.Sprint(m["param"], ":", m["code"])
	}
	return strings.Join(out, " ")
}

func TestMeterCreateListsEveryFault(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		r := h.do("POST", "/v1/meters", h.key[skSandbox], map[string]any{
			"key": "Seats!", "description": strings.Repeat("d", 1001), "status": "ready", "colour": "red",
			"filter":      map[string]any{"product": strings.Repeat("p", 256), "region": "eu"},
			"aggregation": "count", "value_key": "user", "group_by": []any{"account_id", "plan", "plan"},
		})
		expectError(t, r, http.StatusBadRequest, "unknown_parameter") // the first fault's code
		want := "colour:unknown_parameter filter.region:unknown_parameter status:parameter_read_only key:parameter_invalid " +
			"description:parameter_invalid filter.metric_name:parameter_missing filter.product:parameter_invalid " +
			"value_key:parameter_invalid group_by[0]:parameter_invalid group_by[2]:parameter_invalid"
		if got := faultsOf(t, r); got != want {
			t.Fatalf("faults\n got %s\nwant %s", got, want)
		}
		for _, c := range []struct {
			body        any
			code, param string
		}{
			{map[string]any{"key": "k", "filter": map[string]any{"metric_name": "c"}, "aggregation": "unique_count"}, "parameter_missing", "value_key"},
			{map[string]any{"key": "k", "filter": map[string]any{"metric_name": "c\u0000"}, "aggregation": "sum"}, "invalid_string", "filter.metric_name"},
			{map[string]any{"key": "k", "filter": map[string]any{"metric_name": "c"}, "aggregation": "average"}, "parameter_invalid", "aggregation"},
			{[]byte(`{"key":"k",`), "invalid_json", ""},
			{[]byte(`[]`), "invalid_json", ""},
		} {
			r := h.do("POST", "/v1/meters", h.key[skSandbox], c.body)
			expectError(t, r, http.StatusBadRequest, c.code)
			if p, _ := r.json(t)["error"].(map[string]any)["param"].(string); p != c.param {
				t.Errorf("%v: param %q, want %q", c.body, p, c.param)
			}
		}
		if l := h.mustObj(http.StatusOK, "GET", "/v1/meters", nil); len(l["data"].([]any)) != 0 {
			t.Fatalf("refused bodies wrote meters: %v", l)
		}
	})
}

func TestMeterLimitAndKeyTaken(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		h.mustObj(http.StatusCreated, "POST", "/v1/meters", meterBody("m00"))
		expectError(t, h.do("POST", "/v1/meters", h.key[skSandbox], meterBody("m00")), http.StatusConflict, "meter_key_taken")
		// Keys are per environment.
		if r := h.do("POST", "/v1/meters", h.key["secret live"], meterBody("m00")); r.Status != http.StatusCreated {
			t.Fatalf("live: %d %s", r.Status, r.Body)
		}
		for i := 1; i < 32; i++ {
			h.mustObj(http.StatusCreated, "POST", "/v1/meters", meterBody(fmt.Sprintf("m%02d", i)))
		}
		expectError(t, h.do("POST", "/v1/meters", h.key[skSandbox], meterBody("m32")), http.StatusBadRequest, "too_many_meters")
		h.mustObj(http.StatusOK, "DELETE", "/v1/meters/m05", nil)
		h.mustObj(http.StatusCreated, "POST", "/v1/meters", meterBody("m32"))
	})
}

func TestMeterWritesAreIdempotent(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		sk := h.key[skSandbox]
		first := h.do("POST", "/v1/meters", sk, meterBody("seats"), "Idempotency-Key", "create-seats")
		again := h.do("POST", "/v1/meters", sk, meterBody("seats"), "Idempotency-Key", "create-seats")
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(again.Body) != string(first.Body) ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s, then %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		if l := h.mustObj(http.StatusOK, "GET", "/v1/meters", nil); len(l["data"].([]any)) != 1 {
			t.Fatalf("the replay created a meter: %v", l)
		}
		expectError(t, h.do("POST", "/v1/meters", sk, meterBody("other"), "Idempotency-Key", "create-seats"), http.StatusConflict, "idempotency_key_reused")
		patch := map[string]any{"description": "Seats"}
		p1 := h.do("PATCH", "/v1/meters/seats", sk, patch, "Idempotency-Key", "patch-seats")
		p2 := h.do("PATCH", "/v1/meters/seats", sk, patch, "Idempotency-Key", "patch-seats")
		d1 := h.do("DELETE", "/v1/meters/seats", sk, nil, "Idempotency-Key", "delete-seats")
		d2 := h.do("DELETE", "/v1/meters/seats", sk, nil, "Idempotency-Key", "delete-seats")
		if p1.Status != http.StatusOK || string(p2.Body) != string(p1.Body) || p2.Header.Get("Idempotent-Replayed") != "true" ||
			d1.Status != http.StatusOK || string(d2.Body) != string(d1.Body) || d2.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("PATCH %d %s / %s; DELETE %d %s / %s", p1.Status, p1.Body, p2.Body, d1.Status, d1.Body, d2.Body)
		}
	})
}

func TestMetersNeedASecretKey(t *testing.T) {
	h := newHarness(t)
	h.mustObj(http.StatusCreated, "POST", "/v1/meters", meterBody("calls"))
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/meters", meterBody("x")},
		{"GET", "/v1/meters", nil},
		{"GET", "/v1/meters/calls", nil},
		{"PATCH", "/v1/meters/calls", map[string]any{"description": "x"}},
		{"DELETE", "/v1/meters/calls", nil},
		{"GET", "/v1/meters/calls/values?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&window=day", nil},
	} {
		expectError(t, h.do(c.method, c.path, h.key["public sandbox"], c.body), http.StatusForbidden, "secret_key_required")
	}
}

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
		if _, err := meters.Consume(ctx, h.store); err != nil {
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
		if _, err := meters.Consume(context.Background(), h.store); err != nil {
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

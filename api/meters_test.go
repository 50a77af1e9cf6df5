package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
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
		expectMembers(t, m, "id", "object", "key", "description", "filter", "aggregation", "value_key", "group_by", "status", "created_at", "updated_at")
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
		gone := h.mustObj(http.StatusOK, "DELETE", "/v1/meters/m05", nil)
		// Until its figures are purged a deleted meter holds its slot (CONTRACT §21)...
		expectError(t, h.do("POST", "/v1/meters", h.key[skSandbox], meterBody("m32")), http.StatusBadRequest, "too_many_meters")
		// ...which the end of its purge (its MeterPurge workflow's last step) frees.
		if err := h.store.EndMeterPurge(context.Background(), gone["id"].(string)); err != nil {
			t.Fatal(err)
		}
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

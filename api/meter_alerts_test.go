package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// The alerts of a meter (CONTRACT §24): definitions, lists, deletes and their checks.

// alertMeter creates a sum meter grouped by region and returns its path.
func (h *harness) alertMeter(key string, agg ...string) string {
	h.t.Helper()
	body := map[string]any{"key": key, "filter": map[string]any{"metric_name": "calls"}, "aggregation": "sum", "group_by": []any{"region", "plan"}}
	if len(agg) > 0 {
		body["aggregation"] = agg[0]
		if agg[0] == "unique_count" {
			body["value_key"] = "user"
		}
	}
	h.mustObj(http.StatusCreated, "POST", "/v1/meters", body)
	return "/v1/meters/" + key + "/alerts"
}

func TestMeterAlertCRUD(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		alerts := h.alertMeter("api_calls")
		meter := h.mustObj(http.StatusOK, "GET", "/v1/meters/api_calls", nil)
		a := h.mustObj(http.StatusCreated, "POST", alerts, map[string]any{
			"threshold": "1000.50", "window": "month", "account_id": "acct_1", "group": map[string]any{"region": "eu", "plan": "1"},
			"description": "EU spend",
		})
		expectMembers(t, a, "id", "object", "meter", "meter_id", "threshold", "window", "account_id", "group", "description", "created_at")
		// The threshold comes back as the exact decimal, a JSON number; the group as sent.
		if a["object"] != "meter_alert" || a["meter"] != "api_calls" || a["meter_id"] != meter["id"] ||
			fmt.Sprint(a["threshold"]) != "1000.5" || a["window"] != "month" || a["account_id"] != "acct_1" ||
			fmt.Sprint(a["group"]) != "map[plan:1 region:eu]" || a["description"] != "EU spend" {
			t.Fatalf("alert %v", a)
		}
		if r := h.do("GET", alerts+"/"+a["id"].(string), h.key[skSandbox], nil); !strings.Contains(string(r.Body), `"threshold":1000.5,`) ||
			!strings.Contains(string(r.Body), `"group":{"plan":"1","region":"eu"}`) {
			t.Fatalf("GET %s", r.Body)
		}
		checkCreatedAt(t, a)

		// The least an alert says: a number threshold and a window; every account, any group.
		b := h.mustObj(http.StatusCreated, "POST", alerts, map[string]any{"threshold": 5e3, "window": "day"})
		if fmt.Sprint(b["threshold"]) != "5000" || b["account_id"] != nil || fmt.Sprint(b["group"]) != "map[]" || b["description"] != "" {
			t.Fatalf("alert %v", b)
		}
		// Kept canonically: the exact decimal's text, the group as a JSON object with sorted
		// keys ("{}": none), "" for every account.
		var kept []struct{ Threshold, Group, AccountID string }
		if err := h.rawDB().Raw(`SELECT threshold, "group", account_id FROM meter_alerts ORDER BY created_at, id`).Scan(&kept).Error; err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(kept) != `[{1000.5 {"plan":"1","region":"eu"} acct_1} {5000 {} }]` {
			t.Fatalf("kept %v", kept)
		}
		// null is absent for the optional members.
		h.mustObj(http.StatusCreated, "POST", alerts, map[string]any{"threshold": 1, "window": "day", "account_id": nil, "group": nil, "description": nil})

		if got := h.mustObj(http.StatusOK, "GET", alerts+"/"+a["id"].(string), nil); fmt.Sprint(got) != fmt.Sprint(a) {
			t.Fatalf("GET %v, want %v", got, a)
		}
		l := h.mustObj(http.StatusOK, "GET", alerts, nil)
		if data := l["data"].([]any); l["object"] != "list" || len(data) != 3 || l["has_more"] != false ||
			data[1].(map[string]any)["id"] != b["id"] || data[2].(map[string]any)["id"] != a["id"] {
			t.Fatalf("list %v", l)
		}

		// An alert is found only under its own meter, in its own environment.
		other := h.alertMeter("other")
		for _, p := range []string{other + "/" + a["id"].(string), "/v1/meters/nope/alerts/" + a["id"].(string)} {
			expectError(t, h.do("GET", p, h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
			expectError(t, h.do("DELETE", p, h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
		}
		expectError(t, h.do("GET", alerts+"/"+a["id"].(string), h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
		expectError(t, h.do("DELETE", alerts+"/"+a["id"].(string), h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
		expectError(t, h.do("GET", "/v1/meters/nope/alerts", h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
		expectError(t, h.do("POST", "/v1/meters/nope/alerts", h.key[skSandbox], map[string]any{"threshold": 1, "window": "day"}),
			http.StatusNotFound, "resource_missing")
		if l := h.mustObj(http.StatusOK, "GET", other, nil); len(l["data"].([]any)) != 0 {
			t.Fatalf("another meter lists these alerts: %v", l)
		}

		d := h.mustObj(http.StatusOK, "DELETE", alerts+"/"+a["id"].(string), nil)
		if len(d) != 3 || d["id"] != a["id"] || d["object"] != "meter_alert" || d["deleted"] != true {
			t.Fatalf("DELETE %v", d)
		}
		expectError(t, h.do("GET", alerts+"/"+a["id"].(string), h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
		expectError(t, h.do("DELETE", alerts+"/"+a["id"].(string), h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
		if l := h.mustObj(http.StatusOK, "GET", alerts, nil); len(l["data"].([]any)) != 2 {
			t.Fatalf("after delete %v", l)
		}
	})
}

// checkCreatedAt checks created_at is an RFC 3339 UTC time.
func checkCreatedAt(t *testing.T, obj map[string]any) {
	t.Helper()
	if s, _ := obj["created_at"].(string); !strings.HasSuffix(s, "Z") || len(s) < len("2006-01-02T15:04:05Z") {
		t.Fatalf("created_at %q", obj["created_at"])
	}
}

func TestMeterAlertsPaged(t *testing.T) {
	h := newHarness(t)
	alerts := h.alertMeter("calls")
	var ids []string
	for i := 1; i <= 3; i++ {
		ids = append(ids, h.mustObj(http.StatusCreated, "POST", alerts, map[string]any{"threshold": i, "window": "day"})["id"].(string))
	}
	page := h.mustObj(http.StatusOK, "GET", alerts+"?limit=2", nil)
	data := page["data"].([]any)
	if len(data) != 2 || page["has_more"] != true || data[0].(map[string]any)["id"] != ids[2] || data[1].(map[string]any)["id"] != ids[1] {
		t.Fatalf("page 1 %v", page)
	}
	page = h.mustObj(http.StatusOK, "GET", alerts+"?limit=2&starting_after="+ids[1], nil)
	if data := page["data"].([]any); len(data) != 1 || page["has_more"] != false || data[0].(map[string]any)["id"] != ids[0] {
		t.Fatalf("page 2 %v", page)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "starting_after=not-an-id"} {
		r := h.do("GET", alerts+"?"+q, h.key[skSandbox], nil)
		expectError(t, r, http.StatusBadRequest, "parameter_invalid")
	}
	// Another meter's alert is no cursor of this list.
	otherAlert := h.mustObj(http.StatusCreated, "POST", h.alertMeter("other"), map[string]any{"threshold": 1, "window": "day"})["id"].(string)
	r := h.do("GET", alerts+"?starting_after="+otherAlert, h.key[skSandbox], nil)
	expectError(t, r, http.StatusBadRequest, "parameter_invalid")
	if p := r.json(t)["error"].(map[string]any)["param"]; p != "starting_after" {
		t.Fatalf("param %v", p)
	}
}

func TestMeterAlertCreateListsEveryFault(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		alerts := h.alertMeter("calls")
		r := h.do("POST", alerts, h.key[skSandbox], map[string]any{
			"threshold": 0, "window": "week", "account_id": "", "group": map[string]any{"region": 1, "plan": ""},
			"description": strings.Repeat("d", 1001), "id": "x", "colour": "red",
		})
		expectError(t, r, http.StatusBadRequest, "unknown_parameter")
		want := "colour:unknown_parameter id:parameter_read_only threshold:parameter_invalid window:parameter_invalid " +
			"description:parameter_invalid group.plan:parameter_invalid group.region:parameter_invalid account_id:parameter_invalid"
		if got := faultsOf(t, r); got != want {
			t.Fatalf("faults\n got %s\nwant %s", got, want)
		}
		for _, c := range []struct {
			body        any
			code, param string
		}{
			{map[string]any{"window": "day"}, "parameter_missing", "threshold"},
			{map[string]any{"threshold": 1}, "parameter_missing", "window"},
			{map[string]any{"threshold": nil, "window": "day"}, "parameter_missing", "threshold"},
			{map[string]any{"threshold": -1, "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": "0.000", "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": "ten", "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": "1.", "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": " 1", "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": true, "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": []any{1}, "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": map[string]any{"a": 1}, "window": "day"}, "parameter_invalid", "threshold"},
			{map[string]any{"threshold": "1e999", "window": "day"}, "invalid_number", "threshold"},
			{[]byte(`{"threshold":1e999,"window":"day"}`), "invalid_number", "threshold"},
			{[]byte(`{"threshold":1e-400,"window":"day"}`), "invalid_number", "threshold"},
			{[]byte(`{"threshold":1234567890123456789012345678901234567,"window":"day"}`), "invalid_number", "threshold"},
			{[]byte(`{"threshold":1.0000000000000000000000000000000001,"window":"day"}`), "invalid_number", "threshold"},
			{map[string]any{"threshold": 1, "window": "Day"}, "parameter_invalid", "window"},
			{map[string]any{"threshold": 1, "window": 1}, "parameter_invalid", "window"},
			{map[string]any{"threshold": 1, "window": "day", "account_id": 7}, "parameter_invalid", "account_id"},
			{map[string]any{"threshold": 1, "window": "day", "account_id": strings.Repeat("a", 256)}, "parameter_invalid", "account_id"},
			{map[string]any{"threshold": 1, "window": "day", "account_id": "a\tb"}, "invalid_string", "account_id"},
			{map[string]any{"threshold": 1, "window": "day", "group": []any{"eu"}}, "parameter_invalid", "group"},
			{map[string]any{"threshold": 1, "window": "day", "group": "eu"}, "parameter_invalid", "group"},
			{map[string]any{"threshold": 1, "window": "day", "group": map[string]any{"a": "1", "b": "1", "c": "1", "d": "1"}}, "parameter_invalid", "group"},
			{map[string]any{"threshold": 1, "window": "day", "group": map[string]any{"region": nil}}, "parameter_invalid", "group.region"},
			{map[string]any{"threshold": 1, "window": "day", "group": map[string]any{"region": map[string]any{"a": "b"}}}, "parameter_invalid", "group.region"},
			{map[string]any{"threshold": 1, "window": "day", "group": map[string]any{"region": strings.Repeat("é", 256)}}, "parameter_invalid", "group.region"},
			// Keys are checked against the meter's group_by once the meter is found.
			{map[string]any{"threshold": 1, "window": "day", "group": map[string]any{"tier": "gold"}}, "parameter_invalid", "group.tier"},
			{map[string]any{"threshold": 1, "window": "day", "group": map[string]any{"account_id": "a"}}, "parameter_invalid", "group.account_id"},
			{map[string]any{"threshold": 1, "window": "day", "description": 5}, "parameter_invalid", "description"},
			{[]byte(`{"threshold":1,`), "invalid_json", ""},
			{[]byte(`[]`), "invalid_json", ""},
			{[]byte(``), "invalid_json", ""},
		} {
			r := h.do("POST", alerts, h.key[skSandbox], c.body)
			expectError(t, r, http.StatusBadRequest, c.code)
			if p, _ := r.json(t)["error"].(map[string]any)["param"].(string); p != c.param {
				t.Errorf("%v: param %q, want %q", c.body, p, c.param)
			}
		}
		// A meter without group_by takes no group at all.
		h.mustObj(http.StatusCreated, "POST", "/v1/meters", meterBody("plain"))
		r = h.do("POST", "/v1/meters/plain/alerts", h.key[skSandbox], map[string]any{"threshold": 1, "window": "day", "group": map[string]any{"region": "eu"}})
		expectError(t, r, http.StatusBadRequest, "parameter_invalid")
		if got := faultsOf(t, r); got != "group.region:parameter_invalid" {
			t.Fatalf("faults %s", got)
		}
		if l := h.mustObj(http.StatusOK, "GET", alerts, nil); len(l["data"].([]any)) != 0 {
			t.Fatalf("refused bodies wrote alerts: %v", l)
		}
	})
}

// TestMeterAlertAggregations: latest and min meters take no alert (their values move
// either way); the others do, unique_count included.
func TestMeterAlertAggregations(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		body := map[string]any{"threshold": 1, "window": "day"}
		for _, agg := range []string{"latest", "min"} {
			r := h.do("POST", h.alertMeter("m_"+agg, agg), h.key[skSandbox], body)
			expectError(t, r, http.StatusBadRequest, "parameter_invalid")
			if got := faultsOf(t, r); got != "key:parameter_invalid" {
				t.Fatalf("%s: faults %s", agg, got)
			}
		}
		for _, agg := range []string{"sum", "count", "max", "unique_count"} {
			h.mustObj(http.StatusCreated, "POST", h.alertMeter("m_"+agg, agg), body)
		}
	})
}

func TestMeterAlertLimit(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		alerts := h.alertMeter("calls")
		body := map[string]any{"threshold": 10, "window": "day"}
		var first string
		for i := 0; i < 32; i++ {
			id := h.mustObj(http.StatusCreated, "POST", alerts, body)["id"].(string)
			if first == "" {
				first = id
			}
		}
		expectError(t, h.do("POST", alerts, h.key[skSandbox], body), http.StatusBadRequest, "too_many_alerts")
		// The limit is per meter, and a delete frees a place.
		h.mustObj(http.StatusCreated, "POST", h.alertMeter("other"), body)
		h.mustObj(http.StatusOK, "DELETE", alerts+"/"+first, nil)
		h.mustObj(http.StatusCreated, "POST", alerts, body)
		expectError(t, h.do("POST", alerts, h.key[skSandbox], body), http.StatusBadRequest, "too_many_alerts")
	})
}

// TestMeterAlertLimitConcurrent: creates racing on PostgreSQL (SQLite's write
// transactions are exclusive already) leave exactly 32 alerts, the others refused.
func TestMeterAlertLimitConcurrent(t *testing.T) {
	h := newHarness(t)
	alerts := h.alertMeter("calls")
	const n = 48
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := h.send("POST", alerts, h.key[skSandbox], []byte(`{"threshold":10,"window":"day"}`))
			if err != nil {
				t.Error(err)
				return
			}
			if r.Status == http.StatusBadRequest && !strings.Contains(string(r.Body), `"too_many_alerts"`) {
				t.Errorf("refused for another reason: %s", r.Body)
			}
			codes[i] = r.Status
		}()
	}
	close(start)
	wg.Wait()
	got := map[int]int{}
	for _, c := range codes {
		got[c]++
	}
	if got[http.StatusCreated] != 32 || got[http.StatusBadRequest] != n-32 {
		t.Fatalf("statuses %v, want 32 created and %d refused", got, n-32)
	}
	var count int64
	if err := h.rawDB().Raw("SELECT COUNT(*) FROM meter_alerts").Scan(&count).Error; err != nil || count != 32 {
		t.Fatalf("%d alerts stored (%v), want 32", count, err)
	}
}

func TestMeterAlertWritesAreIdempotent(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, h *harness) {
		sk := h.key[skSandbox]
		alerts := h.alertMeter("calls")
		body := map[string]any{"threshold": "12.5", "window": "day", "group": map[string]any{"region": "eu"}}
		first := h.do("POST", alerts, sk, body, "Idempotency-Key", "alert-1")
		again := h.do("POST", alerts, sk, body, "Idempotency-Key", "alert-1")
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(again.Body) != string(first.Body) ||
			again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %s, then %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		if l := h.mustObj(http.StatusOK, "GET", alerts, nil); len(l["data"].([]any)) != 1 {
			t.Fatalf("the replay created an alert: %v", l)
		}
		expectError(t, h.do("POST", alerts, sk, map[string]any{"threshold": 13, "window": "day"}, "Idempotency-Key", "alert-1"),
			http.StatusConflict, "idempotency_key_reused")
		id := first.json(t)["id"].(string)
		d1 := h.do("DELETE", alerts+"/"+id, sk, nil, "Idempotency-Key", "delete-alert-1")
		d2 := h.do("DELETE", alerts+"/"+id, sk, nil, "Idempotency-Key", "delete-alert-1")
		if d1.Status != http.StatusOK || string(d2.Body) != string(d1.Body) || d2.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("DELETE %d %s / %d %s", d1.Status, d1.Body, d2.Status, d2.Body)
		}
	})
}

func TestMeterAlertsNeedASecretKey(t *testing.T) {
	h := newHarness(t)
	alerts := h.alertMeter("calls")
	id := h.mustObj(http.StatusCreated, "POST", alerts, map[string]any{"threshold": 1, "window": "day"})["id"].(string)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", alerts, map[string]any{"threshold": 1, "window": "day"}},
		{"GET", alerts, nil},
		{"GET", alerts + "/" + id, nil},
		{"DELETE", alerts + "/" + id, nil},
	} {
		for _, k := range []string{"public sandbox", "public live"} {
			expectError(t, h.do(c.method, c.path, h.key[k], c.body), http.StatusForbidden, "secret_key_required")
		}
	}
	if l := h.mustObj(http.StatusOK, "GET", alerts, nil); len(l["data"].([]any)) != 1 {
		t.Fatalf("a publishable key changed the alerts: %v", l)
	}
}

package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestNumbersAndStringsAtTheEdge: CONTRACT §15 for usage events and account properties,
// on PostgreSQL and SQLite. A number too long written out is 400 invalid_number, a string
// PostgreSQL cannot store is 400 invalid_string, each with its param, and nothing is
// written. Before, the issue's 458-byte body was a 201 whose list read was 2.6 MB, and
// 1e-16384 in metadata was a 500 on PostgreSQL.
func TestNumbersAndStringsAtTheEdge(t *testing.T) {
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = `"n` + string(rune('a'+i)) + `":1e131000`
	}
	issue := usageBody("t1", "increment", metricJSON("a", "m", "1", "day", `"metadata":{`+strings.Join(twenty, ",")+`}`))
	usage := []struct {
		name        string
		body        []byte
		code, param string
	}{
		{"the issue's twenty 1e131000", issue, "invalid_number", "event_metrics[0].metadata.na"},
		{"1e-99999 in metadata", usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":{"x":[1e-99999]}`)), "invalid_number", "event_metrics[0].metadata.x[0]"},
		{"overflows numeric", usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":{"x":1e-16384}`)), "invalid_number", "event_metrics[0].metadata.x"},
		{"65 characters in metadata", usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":{"x":{"y":-1e63}}`)), "invalid_number", "event_metrics[0].metadata.x.y"},
		{"65 characters in metric_value", usageBody("t", "increment", metricJSON("a", "m", "1e64", "day")), "invalid_number", "event_metrics[0].metric_value"},
		{"NUL in metadata", usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":{"x":"a\u0000"}`)), "invalid_string", "event_metrics[0].metadata.x"},
		{"surrogate half in metadata", usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":{"x":"\udc00"}`)), "invalid_string", "event_metrics[0].metadata.x"},
		{"invalid UTF-8 in metadata", usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":{"x":"`+"\xfe"+`"}`)), "invalid_string", "event_metrics[0].metadata.x"},
		{"NUL in account_id", []byte(`{"transaction_id":"t","mode":"set","event_metrics":[{"account_id":"a\u0000","product":"p","metric_name":"m","metric_value":1,"metric_resolution":"day"}]}`), "invalid_string", "event_metrics[0].account_id"},
		{"newline in transaction_id", []byte(`{"transaction_id":"t\n","mode":"set","event_metrics":[` + metricJSON("a", "m", "1", "day") + `]}`), "invalid_string", "transaction_id"},
	}
	accounts := []struct {
		name, method string
		body         string
		param        string
	}{
		{"create with 1e400", "POST", `{"name":"A","properties":{"n":1e400}}`, "properties.n"},
		{"create with 1e-99999", "POST", `{"name":"A","properties":{"n":1e-99999}}`, "properties.n"},
		{"create with 65 characters", "POST", `{"name":"A","properties":{"n":1e64}}`, "properties.n"},
		{"patch with 1e400", "PATCH", `{"properties":{"n":1e400}}`, "properties.n"},
		{"patch with an exponent of twenty digits", "PATCH", `{"properties":{"n":1e99999999999999999999}}`, "properties.n"},
	}
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db)
			sk := h.key["secret sandbox"]
			for _, c := range usage {
				r := h.do("POST", "/v1/usage/events", sk, c.body)
				expectError(t, r, http.StatusBadRequest, c.code)
				if e := r.json(t)["error"].(map[string]any); e["param"] != c.param {
					t.Errorf("%s: param %v, want %s: %s", c.name, e["param"], c.param, r.Body)
				}
				if got := h.usageCounts("sandbox"); got != [3]int64{} {
					t.Fatalf("%s: written: %v", c.name, got)
				}
			}

			created := h.do("POST", "/v1/accounts", sk, []byte(`{"name":"Kept","properties":{"n":1e63,"m":-0.5}}`))
			if created.Status != http.StatusCreated {
				t.Fatalf("64 characters: %d %s", created.Status, created.Body)
			}
			id := created.json(t)["id"].(string)
			for _, c := range accounts {
				path := "/v1/accounts"
				if c.method == "PATCH" {
					path += "/" + id
				}
				r := h.do(c.method, path, sk, []byte(c.body))
				expectError(t, r, http.StatusBadRequest, "invalid_number")
				if e := r.json(t)["error"].(map[string]any); e["param"] != c.param {
					t.Errorf("%s: param %v, want %s: %s", c.name, e["param"], c.param, r.Body)
				}
			}
			list := h.do("GET", "/v1/accounts", sk, nil)
			data, _ := list.json(t)["data"].([]any)
			if len(data) != 1 {
				t.Fatalf("accounts after refusals: %d, want 1: %s", len(data), list.Body)
			}
			props := data[0].(map[string]any)["properties"].(map[string]any)
			if len(props) != 2 {
				t.Fatalf("properties changed by a refused PATCH: %v", props)
			}
		})
	}
}

// TestStoredMetadataReadsBack: the largest metadata the API takes, in the shapes that
// make storage print the most (numbers at 64 characters, 1e63 that PostgreSQL writes out,
// thousands of zeros), reads back from GET /v1/usage/events in well under 64 KiB, on
// PostgreSQL and SQLite: the 16 KiB limit counts numbers written out. Before, 16 KiB of
// 1e63 was accepted and read back as 210 KB.
func TestStoredMetadataReadsBack(t *testing.T) {
	fill := func(item, as string) string {
		// As many items as fit in 16 KiB written out: {"a":[item,item,…]}, each sent as `as`.
		n := (16<<10 - len(`{"a":[]}`) + 1) / (len(item) + 1)
		return `{"a":[` + strings.TrimSuffix(strings.Repeat(as+",", n), ",") + `]}`
	}
	e63 := "1" + strings.Repeat("0", 63)
	shapes := []struct {
		name, meta string
		status     int
	}{
		{"64-character numbers", fill(strings.Repeat("9", 64), strings.Repeat("9", 64)), http.StatusCreated},
		{"1e63 up to 16 KiB written out", fill(e63, "1e63"), http.StatusCreated},
		{"zeros", fill("0", "0"), http.StatusCreated},
		{"empty objects", fill("{}", "{}"), http.StatusCreated},
		{"1e63 up to 16 KiB sent", fill("1e63", "1e63"), http.StatusBadRequest},
		{"one number over", strings.Replace(fill(e63, "1e63"), "[", "[1e63,", 1), http.StatusBadRequest},
	}
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db)
			sk := h.key["secret sandbox"]
			for i, c := range shapes {
				tx := "max-" + string(rune('a'+i))
				r := h.do("POST", "/v1/usage/events", sk, usageBody(tx, "increment", metricJSON("a", "m", "1", "day", `"metadata":`+c.meta)))
				if c.status != http.StatusCreated {
					expectError(t, r, c.status, "parameter_invalid")
					if e := r.json(t)["error"].(map[string]any); e["param"] != "event_metrics[0].metadata" {
						t.Errorf("%s: param %v: %s", c.name, e["param"], r.Body)
					}
					continue
				}
				if r.Status != c.status {
					t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
				}
				read := h.do("GET", "/v1/usage/events?limit=1&transaction_id="+tx, sk, nil)
				if read.Status != http.StatusOK || len(read.Body) > 64<<10 {
					t.Fatalf("%s: read %d, %d bytes", c.name, read.Status, len(read.Body))
				}
				t.Logf("%s: sent %d bytes of metadata, read %d bytes", c.name, len(c.meta), len(read.Body))
			}
			if got := h.usageCounts("sandbox"); got[1] != 4 {
				t.Fatalf("usage rows %v, want 4 events", got)
			}
		})
	}
}

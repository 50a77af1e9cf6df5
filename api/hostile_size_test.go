package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestListResponseBounded: storage must not expand what a client sent (PostgreSQL's
// jsonb prints 1e63 as 64 digits). Rows as large as the rules allow, with every number
// at the longest it may be written out, are listed 100 at a time on both databases:
// each page stays within a fixed factor of what the client sent for those rows (usage
// rows: within the printed metadata limit each), and under a few megabytes.
func TestListResponseBounded(t *testing.T) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db)
			sk := h.key[skSandbox]
			sent := map[string]int{} // bytes of the create bodies, by path
			post := func(path string, body []byte) map[string]any {
				t.Helper()
				sent[path] += len(body)
				r := h.do("POST", path, sk, body)
				if r.Status != http.StatusCreated {
					t.Fatalf("POST %s: %d %.300s", path, r.Status, r.Body)
				}
				return r.json(t)
			}
			// The longest number a property or metadata value may be: 64 characters
			// written out, 4 as sent.
			const bigNumber = "1e63"
			var account string
			for i := range 100 {
				props := map[string]any{}
				for k := range 50 {
					key := fmt.Sprintf("%02d%s", k, strings.Repeat("k", 38))
					if k%2 == 0 {
						props[key] = json.RawMessage(bigNumber)
					} else {
						props[key] = strings.Repeat("v", 500)
					}
				}
				b, _ := json.Marshal(map[string]any{
					"name": fmt.Sprintf("%03d%s", i, strings.Repeat("n", 252)), "external_id": fmt.Sprintf("%03d%s", i, strings.Repeat("e", 252)),
					"properties": props,
				})
				account, _ = post("/v1/accounts", b)["id"].(string)
			}
			for range 3 {
				var skus, terms []any
				for k := range 100 {
					skus = append(skus, map[string]any{"code": fmt.Sprintf("%03d%s", k, strings.Repeat("c", 252)),
						"name": strings.Repeat("n", 255), "quantity": "1", "unit_price": "2"})
				}
				for range 20 {
					terms = append(terms, map[string]any{"name": strings.Repeat("t", 255), "billing_frequency": "monthly",
						"description": strings.Repeat("d", 5000)})
				}
				b, _ := json.Marshal(map[string]any{"customer": map[string]any{"id": account}, "skus": skus, "terms": terms,
					"opportunity_id": strings.Repeat("o", 255)})
				post("/v1/deals", b)
			}
			for batch := range 4 {
				var metrics []string
				for range 25 {
					var meta []string
					// Each number grows by 60 characters when printed, and the 16 KiB limit
					// counts what is printed: as many as that allows.
					for k := 0; len(strings.Join(meta, ","))+60*(k+1) < 16<<10-100; k++ {
						meta = append(meta, fmt.Sprintf(`"%04d":%s`, k, bigNumber))
					}
					metrics = append(metrics, fmt.Sprintf(`{"account_id":%q,"product":"api","metric_name":"calls","metric_value":1,"metric_resolution":"day","metadata":{%s}}`,
						account, strings.Join(meta, ",")))
				}
				body := fmt.Sprintf(`{"transaction_id":"size-%d","mode":"increment","event_metrics":[%s]}`, batch, strings.Join(metrics, ","))
				sent["/v1/usage/events"] += len(body)
				if r := h.do("POST", "/v1/usage/events", sk, []byte(body)); r.Status != http.StatusCreated {
					t.Fatalf("usage batch: %d %.300s", r.Status, r.Body)
				}
			}
			// A page may take twice what its rows were made from (an event carries the
			// object it is about, a deal its customer), plus perRow for each row: usage
			// metadata is bounded as printed (16 KiB), not as sent.
			lists := []struct {
				path   string
				from   int
				perRow int
			}{
				{"/v1/accounts?limit=100", sent["/v1/accounts"], 0},
				{"/v1/deals?limit=100", sent["/v1/deals"], 0},
				{"/v1/events?limit=100", sent["/v1/accounts"] + sent["/v1/deals"], 0},
				{"/v1/usage/events?limit=100", 0, 16<<10 + 1<<10},
				{"/v1/usage/summary?resolution=day&limit=1000", 0, 1 << 10},
				{"/v1/event_types", 0, 64 << 10},
			}
			for _, li := range lists {
				l := li.path
				r := h.do("GET", l, sk, nil)
				if r.Status != http.StatusOK {
					t.Fatalf("GET %s: %d %.300s", l, r.Status, r.Body)
				}
				var page struct{ Data []json.RawMessage }
				if err := json.Unmarshal(r.Body, &page); err != nil {
					t.Fatal(err)
				}
				if len(page.Data) == 0 {
					t.Errorf("GET %s: no rows to measure", l)
				}
				t.Logf("GET %s: %d rows, %d bytes (%d sent for them)", l, len(page.Data), len(r.Body), li.from)
				if limit := 2*li.from + len(page.Data)*li.perRow + 16<<10; len(r.Body) > limit {
					t.Errorf("GET %s: %d bytes for %d rows, more than %d", l, len(r.Body), len(page.Data), limit)
				}
				if len(r.Body) > 8<<20 {
					t.Errorf("GET %s: %d bytes, more than 8 MiB", l, len(r.Body))
				}
			}
		})
	}
}

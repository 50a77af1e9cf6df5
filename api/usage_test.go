package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// usageBody is a request with the given metrics (raw JSON objects).
func usageBody(tx, mode string, metrics ...string) []byte {
	return []byte(fmt.Sprintf(`{"transaction_id":%q,"mode":%q,"event_metrics":[%s]}`, tx, mode, strings.Join(metrics, ",")))
}

func metricJSON(acct, name, value, res string, extra ...string) string {
	s := fmt.Sprintf(`{"account_id":%q,"product":"api","metric_name":%q,"metric_value":%s,"metric_resolution":%q`, acct, name, value, res)
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

func (h *harness) usageEnv(name string) models.Env {
	h.t.Helper()
	e, err := h.store.Environment(context.Background(), h.orgID, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

// counts returns batches, events and rollups of an environment.
func (h *harness) usageCounts(env string) [3]int64 {
	h.t.Helper()
	b, e, r, err := h.store.UsageCounts(context.Background(), h.usageEnv(env))
	if err != nil {
		h.t.Fatal(err)
	}
	return [3]int64{b, e, r}
}

func summary(t *testing.T, h *harness, key, query string) map[string]string {
	t.Helper()
	r := h.do("GET", "/v1/usage/summary?"+query, key, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("summary: %d %s", r.Status, r.Body)
	}
	var list struct{ Data []map[string]json.RawMessage }
	if err := json.Unmarshal(r.Body, &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, row := range list.Data {
		var acct, name, ps string
		_ = json.Unmarshal(row["account_id"], &acct)
		_ = json.Unmarshal(row["metric_name"], &name)
		_ = json.Unmarshal(row["period_start"], &ps)
		got[acct+"/"+name+"@"+ps] = string(row["value"]) // raw: must be a JSON number
	}
	return got
}

func TestUsageIngestAndSummary(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	at := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour).Add(7 * time.Minute)
	ts := fmt.Sprintf(`"timestamp":%q`, at.Format(time.RFC3339))
	hour := at.Truncate(time.Hour).Format(time.RFC3339)

	r := h.do("POST", "/v1/usage/events", sk, usageBody("tx-1", "increment",
		metricJSON("acct_1", "calls", "0.1", "hour", ts),
		metricJSON("acct_1", "calls", "0.2", "hour", ts, `"metadata":{"region":"eu"}`),
		metricJSON("acct_2", "calls", "-5", "hour", ts)))
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	body := r.json(t)
	for k, want := range map[string]any{"object": "usage_event_batch", "transaction_id": "tx-1", "mode": "increment",
		"environment": "sandbox", "metrics_accepted": float64(3), "duplicate": false} {
		if body[k] != want {
			t.Errorf("%s = %v, want %v", k, body[k], want)
		}
	}
	if _, err := time.Parse(time.RFC3339, body["received_at"].(string)); err != nil {
		t.Errorf("received_at: %v", err)
	}
	h.do("POST", "/v1/usage/events", sk, usageBody("tx-2", "increment", metricJSON("acct_1", "calls", "1e1", "hour", ts)))
	want := map[string]string{"acct_1/calls@" + hour: "10.3", "acct_2/calls@" + hour: "-5"}
	if got := summary(t, h, sk, "resolution=hour"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("summary %v, want %v", got, want)
	}
	// Rows of other resolutions are not added in; filters narrow.
	if got := summary(t, h, sk, "resolution=day"); len(got) != 0 {
		t.Fatalf("day summary %v", got)
	}
	if got := summary(t, h, sk, "resolution=hour&account_id=acct_2&from="+hour); len(got) != 1 {
		t.Fatalf("filtered summary %v", got)
	}
	// set replaces the period's total, a later set wins, an increment adds to it.
	for i, v := range []string{"40", "7"} {
		h.do("POST", "/v1/usage/events", sk, usageBody(fmt.Sprint("seats-", i), "set", metricJSON("acct_1", "seats", v, "day", ts)))
	}
	h.do("POST", "/v1/usage/events", sk, usageBody("seats-inc", "increment", metricJSON("acct_1", "seats", "3", "day", ts)))
	day := at.Truncate(24 * time.Hour).Format(time.RFC3339)
	if got := summary(t, h, sk, "resolution=day"); got["acct_1/seats@"+day] != "10" {
		t.Fatalf("seats %v", got)
	}
	expectError(t, h.do("GET", "/v1/usage/summary", sk, nil), 400, "parameter_missing")
	expectError(t, h.do("GET", "/v1/usage/summary?resolution=year", sk, nil), 400, "parameter_invalid")
}

func TestUsageEventsList(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	ts := fmt.Sprintf(`"timestamp":%d`, time.Now().Add(-time.Hour).Unix())
	h.do("POST", "/v1/usage/events", sk, usageBody("a", "increment",
		metricJSON("acct_1", "calls", "1.50", "minute", `"metadata":{"k":[1,2]}`),
		metricJSON("acct_2", "calls", "2", "week", ts)))
	h.do("POST", "/v1/usage/events", sk, usageBody("b", "set", metricJSON("acct_1", "seats", "3", "month")))

	list := func(q string) []map[string]any {
		r := h.do("GET", "/v1/usage/events?"+q, sk, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
		data, _ := r.json(t)["data"].([]any)
		out := make([]map[string]any, len(data))
		for i, d := range data {
			out[i] = d.(map[string]any)
		}
		return out
	}
	all := list("")
	if len(all) != 3 || all[0]["transaction_id"] != "b" || all[0]["object"] != "usage_event" || all[0]["mode"] != "set" {
		t.Fatalf("list %v", all)
	}
	first := list("transaction_id=a&account_id=acct_1")
	if len(first) != 1 || first[0]["metric_value"] != 1.5 || fmt.Sprint(first[0]["metadata"]) != "map[k:[1 2]]" {
		t.Fatalf("filtered %v", first)
	}
	if got := list("to=" + fmt.Sprint(time.Now().Add(-30*time.Minute).Unix())); len(got) != 1 || got[0]["account_id"] != "acct_2" {
		t.Fatalf("to filter %v", got)
	}
	if got := list("metric_name=seats&product=api"); len(got) != 1 {
		t.Fatalf("metric filter %v", got)
	}
	page1 := list("limit=2")
	page2 := list("limit=2&starting_after=" + page1[1]["id"].(string))
	if len(page1) != 2 || len(page2) != 1 || page2[0]["id"] == page1[1]["id"] {
		t.Fatalf("pages %v / %v", page1, page2)
	}
	expectError(t, h.do("GET", "/v1/usage/events?from=yesterday", sk, nil), 400, "parameter_invalid")
}

func TestUsageIdempotency(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	first := h.do("POST", "/v1/usage/events", sk, usageBody("tx", "increment",
		metricJSON("a", "m", "1", "day", `"metadata":{"x":1,"y":"z"}`), metricJSON("b", "m", "2", "day")))
	if first.Status != 201 {
		t.Fatalf("%d %s", first.Status, first.Body)
	}
	// Equal by value: 1.0 and 1, other key order and spacing, {} for a missing metadata.
	same := []byte(`{ "mode":"increment", "event_metrics":[
		{"metadata":{"y":"z","x":1.0},"metric_resolution":"day","metric_value":10e-1,"metric_name":"m","product":"api","account_id":"a"},
		{"account_id":"b","product":"api","metric_name":"m","metric_value":2.00,"metric_resolution":"day","metadata":{}}],
		"transaction_id":"tx" }`)
	r := h.do("POST", "/v1/usage/events", sk, same)
	if r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %v %s", r.Status, r.Header, r.Body)
	}
	orig, replay := first.json(t), r.json(t)
	if replay["duplicate"] != true || replay["received_at"] != orig["received_at"] || replay["metrics_accepted"] != orig["metrics_accepted"] {
		t.Fatalf("replay %v, original %v", replay, orig)
	}
	expectError(t, h.do("POST", "/v1/usage/events", sk, usageBody("tx", "increment",
		metricJSON("a", "m", "1.01", "day", `"metadata":{"x":1,"y":"z"}`), metricJSON("b", "m", "2", "day"))), 409, "transaction_id_reused")
	if got := h.usageCounts("sandbox"); got != [3]int64{1, 2, 2} {
		t.Fatalf("sandbox counts %v", got)
	}
	// The same transaction id in live is another batch.
	if r := h.do("POST", "/v1/usage/events", h.key["secret live"], same); r.Status != 201 {
		t.Fatalf("live: %d %s", r.Status, r.Body)
	}
	if got := h.usageCounts("live"); got != [3]int64{1, 2, 2} {
		t.Fatalf("live counts %v", got)
	}
}

func TestUsageConcurrentDuplicatesCountOnce(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	body := usageBody("burst", "increment", metricJSON("a", "m", "1", "hour"), metricJSON("a", "m", "2", "hour"), metricJSON("b", "m", "3", "day"))
	// The batch has no timestamp: its rows are in the hour the winner was received, this
	// one or (if it turns during the burst) the next.
	hours := []time.Time{time.Now().UTC().Truncate(time.Hour)}
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", h.srv.URL+"/v1/usage/events", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+sk)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode == 200 && res.Header.Get("Idempotent-Replayed") != "true" {
				t.Error("200 without Idempotent-Replayed")
			}
			statuses[i] = res.StatusCode
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[201] != 1 || count[200] != 49 {
		t.Fatalf("statuses %v", count)
	}
	if got := h.usageCounts("sandbox"); got != [3]int64{1, 3, 2} {
		t.Fatalf("counts %v", got)
	}
	hours = append(hours, time.Now().UTC().Truncate(time.Hour))
	got := summary(t, h, sk, "resolution=hour")
	inHour := func(hour time.Time) bool {
		return fmt.Sprint(got) == fmt.Sprintf("map[a/m@%s:3]", hour.Format(time.RFC3339))
	}
	if len(got) != 1 || !inHour(hours[0]) && !inHour(hours[1]) {
		t.Fatalf("summary %v, want a/m 3 in the hour %v or %v", got, hours[0], hours[1])
	}
}

func TestUsageEnvironmentsAreInvisibleToEachOther(t *testing.T) {
	h := newHarness(t)
	h.do("POST", "/v1/usage/events", h.key["secret live"], usageBody("live-1", "increment", metricJSON("a", "m", "1", "day")))
	for _, path := range []string{"/v1/usage/events", "/v1/usage/summary?resolution=day"} {
		r := h.do("GET", path, h.key["secret sandbox"], nil)
		if data := r.json(t)["data"].([]any); r.Status != 200 || len(data) != 0 {
			t.Fatalf("sandbox sees %s: %s", path, r.Body)
		}
		r = h.do("GET", path, h.key["secret live"], nil)
		if data := r.json(t)["data"].([]any); len(data) != 1 {
			t.Fatalf("live sees %s: %s", path, r.Body)
		}
	}
	expectError(t, h.do("GET", "/v1/usage/events", h.key["public live"], nil), 403, "secret_key_required")
}

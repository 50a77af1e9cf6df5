package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
)

// hostileCase is one request that must get a 4xx in the CONTRACT §4 envelope and change
// nothing (CONTRACT §15).
type hostileCase struct {
	name         string
	method, path string
	body         []byte // sent as is, as application/json; nil: no body
	status       int
	code         string // "" = any code
	param        string // error.param the answer must carry ("" = none)
}

// hostileString is a JSON string literal (source text, so that raw invalid bytes reach
// the server) and whether a field allowing free text (tabs, newlines) also refuses it.
type hostileString struct {
	name    string
	literal string
	inText  bool
}

var hostileStrings = []hostileString{
	{"NUL", `"a\u0000"`, true},
	{"NUL alone", `"\u0000"`, true},
	{"invalid byte", "\"a\xffb\"", true},
	{"overlong NUL", "\"\xc0\x80\"", true},
	{"encoded surrogate", "\"x\xed\xa0\x80\"", true},
	{"truncated rune", "\"\xe6\x9d\"", true},
	{"lone surrogate escape", `"a\ud800"`, true},
	{"lone low surrogate escape", `"\udfffz"`, true},
	{"control", `"a\u0001b"`, false},
	{"newline", `"a\nb"`, false},
	{"tab", `"a\tb"`, false},
	{"escape", `"\u001b[31mred"`, false},
	{"DEL", `"a\u007f"`, false},
	{"C1", `"a\u0085b"`, false},
}

// hostileIDs are path segments that cannot be ids: each must be a 404 without a query.
var hostileIDs = []string{
	"%00", "%FF", "%C0%80", "%ED%A0%80", "a%00b", "%01", "%0A", "%7F", "%C2%85",
	"..", ".", "%2E%2E", "%252E", "x%20OR%201=1", "'%3B--",
	"%C3%BCn%C3%AFc%C3%B8d%C3%A9", "%E2%80%AE", "%F0%9F%8E%89",
	strings.Repeat("a", 5000), strings.Repeat("%FF", 300),
	"00000000-0000-4000-8000-00000000000", "00000000-0000-4000-8000-0000000000000",
	"{00000000-0000-4000-8000-000000000000}", "urn:uuid:00000000-0000-4000-8000-000000000000",
	"00000000000040008000000000000000", "00000000-0000-4000-8000-00000000000g",
}

// hostileQueryValues cannot be valid in any filter; the id filters also refuse
// notAnID.
var hostileQueryValues = []string{"%00", "a%00", "%FF", "%C0%80", "%ED%A0%80", "%01", "%0A", "%1B", "%C2%85", "%ZZ"}

const notAnID = "not-an-id"

// with returns body (a JSON object with the member path set to the placeholder) with
// the placeholder replaced by literal.
func with(body string, literal string) []byte {
	return []byte(strings.Replace(body, `"@@"`, literal, 1))
}

// decoded is a JSON string literal as the server's decoder reads it (U+FFFD for each
// invalid byte).
func decoded(literal string) string {
	var s string
	if err := json.Unmarshal([]byte(literal), &s); err != nil {
		panic(err)
	}
	return s
}

// hostileSeed are the objects the cases aim at; meter is a meter's key.
type hostileSeed struct{ account, deal, meter, endpoint string }

// meterValuesQuery is a valid values query without limit, for cases to add to.
const meterValuesQuery = "window=day&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z"

// endpointStatsQuery is a valid stats query, for cases to add to.
const endpointStatsQuery = "window=hour&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z"

func hostileCases(s hostileSeed) []hostileCase {
	var cs []hostileCase
	add := func(c hostileCase) { cs = append(cs, c) }

	// Issue 13's own cases: each was a 500 on PostgreSQL.
	for _, c := range []hostileCase{
		{name: "issue: GET /v1/accounts/%00", method: "GET", path: "/v1/accounts/%00", status: 404, code: "resource_missing"},
		{name: "issue: GET /v1/accounts/%FF", method: "GET", path: "/v1/accounts/%FF", status: 404, code: "resource_missing"},
		{name: "issue: GET /v1/deals?starting_after=%00", method: "GET", path: "/v1/deals?starting_after=%00",
			status: 400, code: "parameter_invalid", param: "starting_after"},
		{name: "issue: GET /v1/events/%00", method: "GET", path: "/v1/events/%00", status: 404, code: "resource_missing"},
		{name: "issue: POST /v1/accounts name a NUL", method: "POST", path: "/v1/accounts",
			body: []byte(`{"name":"a\u0000","billing_email":"ap@acme.example"}`), status: 400, code: "invalid_string", param: "name"},
	} {
		add(c)
	}

	// Path ids: every /:id route, every id that cannot be one.
	idRoutes := []struct{ method, path string }{
		{"GET", "/v1/accounts/%s"}, {"PATCH", "/v1/accounts/%s"}, {"DELETE", "/v1/accounts/%s"},
		{"POST", "/v1/accounts/%s/activate"},
		{"GET", "/v1/deals/%s"}, {"PATCH", "/v1/deals/%s"},
		{"POST", "/v1/deals/%s/submit"}, {"POST", "/v1/deals/%s/approve"}, {"POST", "/v1/deals/%s/sign"},
		{"POST", "/v1/deals/%s/activate"}, {"POST", "/v1/deals/%s/void"},
		{"GET", "/v1/events/%s"}, {"POST", "/v1/events/%s/replay"}, {"GET", "/v1/events/replay/%s"},
		{"GET", "/v1/meters/" + s.meter + "/alerts/%s"}, {"DELETE", "/v1/meters/" + s.meter + "/alerts/%s"},
		{"GET", "/v1/webhook_endpoints/%s/stats?" + endpointStatsQuery},
	}
	for _, r := range idRoutes {
		var body []byte
		if r.method == "PATCH" {
			body = []byte(`{}`)
		}
		for _, id := range hostileIDs {
			short := id
			if len(short) > 24 {
				short = fmt.Sprintf("%.12s…(%d)", id, len(id))
			}
			add(hostileCase{name: r.method + " " + r.path + " id " + short, method: r.method,
				path: fmt.Sprintf(r.path, id), body: body, status: 404, code: "resource_missing"})
		}
	}

	// Path keys of meters: one that cannot be a key is a 404 without a query, as an
	// unknown one is (a few of hostileIDs could be keys: those are unknown).
	for _, r := range []struct {
		method, path string
		body         []byte
	}{
		{"GET", "/v1/meters/%s", nil}, {"PATCH", "/v1/meters/%s", []byte(`{"description":"x"}`)}, {"DELETE", "/v1/meters/%s", nil},
		{"GET", "/v1/meters/%s/values?" + meterValuesQuery, nil},
		{"POST", "/v1/meters/%s/alerts", []byte(`{"threshold":1,"window":"day"}`)}, {"GET", "/v1/meters/%s/alerts", nil},
		{"GET", "/v1/meters/%s/alerts/00000000-0000-4000-8000-000000000000", nil},
	} {
		for _, id := range hostileIDs {
			add(hostileCase{name: fmt.Sprintf("%s %s key %.24s", r.method, r.path, id), method: r.method,
				path: fmt.Sprintf(r.path, id), body: r.body, status: 404, code: "resource_missing"})
		}
	}

	// Query parameters of every list route.
	lists := []struct {
		path     string
		idParams []string // filters that take an id
		params   []string // other filters
	}{
		{"/v1/accounts", []string{"starting_after"}, []string{"status", "external_id", "limit", "unknown"}},
		{"/v1/deals", []string{"starting_after", "customer"}, []string{"status", "limit"}},
		{"/v1/events", []string{"starting_after", "object_id", "endpoint_id"}, []string{"type", "status", "created_after", "created_before"}},
		{"/v1/usage/events", []string{"starting_after"}, []string{"account_id", "product", "metric_name", "transaction_id", "from", "to"}},
		{"/v1/usage/summary?resolution=day", nil, []string{"account_id", "product", "metric_name", "from", "to", "limit"}},
		{"/v1/meters", []string{"starting_after"}, []string{"limit"}},
		{"/v1/meters/" + s.meter + "/alerts", []string{"starting_after"}, []string{"limit"}},
		{"/v1/meters/" + s.meter + "/values?" + meterValuesQuery, nil,
			[]string{"from", "to", "window", "account_id", "group_by", "filter[region]", "limit", "page", "unknown"}},
		{"/v1/webhook_endpoints/00000000-0000-4000-8000-000000000000/stats?" + endpointStatsQuery, nil, []string{"from", "to", "window", "unknown"}},
	}
	for _, l := range lists {
		sep := "?"
		if strings.Contains(l.path, "?") {
			sep = "&"
		}
		for _, p := range append(append([]string(nil), l.idParams...), l.params...) {
			for _, v := range hostileQueryValues {
				add(hostileCase{name: "GET " + l.path + " " + p + "=" + v, method: "GET", path: l.path + sep + p + "=" + v,
					status: 400, code: "parameter_invalid", param: p})
			}
		}
		for _, p := range l.idParams {
			for _, v := range []string{notAnID, strings.Repeat("a", 5000), "..", "%C3%BC", "00000000000040008000000000000000"} {
				add(hostileCase{name: "GET " + l.path + " " + p + "=" + fmt.Sprintf("%.12s", v), method: "GET", path: l.path + sep + p + "=" + v,
					status: 400, code: "parameter_invalid", param: p})
			}
		}
	}

	// Body strings: every string member of every body, each hostile string in turn.
	type field struct {
		param string
		body  map[string]any // "@@" marks where the string goes (a value or a member name)
		text  bool           // free text: tabs and newlines allowed
	}
	const x = "@@"
	obj := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	acct := func(create bool) []field {
		base := func(kv ...any) map[string]any {
			if create {
				kv = append(kv, "name", "Hostile Ltd")
			}
			return obj(kv...)
		}
		return []field{
			{"name", obj("name", x), false},
			{"external_id", base("external_id", x), false},
			{"domain", base("domain", x), false},
			{"billing_email", base("billing_email", x), false},
			{"properties.plan", base("properties", obj("plan", x)), true},
			{"properties.", base("properties", obj(x, "gold")), false}, // a member name: param ends with it
		}
	}
	deal := func(create bool) []field {
		base := func(kv ...any) map[string]any {
			if create {
				kv = append(kv, "customer", obj("id", s.account))
			}
			return obj(kv...)
		}
		fs := []field{{"customer.id", obj("customer", obj("id", x)), false}}
		for _, k := range []string{"contract_activates_date", "net_price", "net_price_currency", "net_price_precision",
			"original_net_price", "original_net_price_currency", "original_net_price_precision",
			"opportunity_id", "signed_contract_url"} {
			fs = append(fs, field{k, base(k, x), false})
		}
		sku := func() map[string]any { return obj("code", "c", "name", "n", "quantity", "1", "unit_price", "2") }
		for _, k := range []string{"id", "code", "name", "quantity", "unit_price"} {
			item := sku()
			item[k] = x
			fs = append(fs, field{"skus[1]." + k, base("skus", []any{sku(), item}), false})
		}
		for _, k := range []string{"id", "name", "description", "start_date", "end_date", "billing_frequency"} {
			item := obj("name", "n", "billing_frequency", "monthly")
			item[k] = x
			fs = append(fs, field{"terms[0]." + k, base("terms", []any{item}), k == "description"})
		}
		return fs
	}
	meter := func() []field {
		base := func(kv ...any) map[string]any {
			return obj(append([]any{"key", "hostile", "filter", obj("metric_name", "calls"),
				"aggregation", "unique_count", "value_key", "user"}, kv...)...)
		}
		return []field{
			{"key", base("key", x), false},
			{"description", base("description", x), true},
			{"filter.metric_name", base("filter", obj("metric_name", x)), false},
			{"filter.product", base("filter", obj("metric_name", "calls", "product", x)), false},
			{"aggregation", base("aggregation", x), false},
			{"value_key", base("value_key", x), false},
			{"group_by[0]", base("group_by", []any{x}), false},
		}
	}
	alert := func(kv ...any) map[string]any {
		return obj(append([]any{"threshold", 10, "window", "day"}, kv...)...)
	}
	targets := []struct {
		method, path string
		fields       []field
	}{
		{"POST", "/v1/accounts", acct(true)},
		{"PATCH", "/v1/accounts/" + s.account, acct(false)},
		{"POST", "/v1/deals", deal(true)},
		{"PATCH", "/v1/deals/" + s.deal, deal(false)},
		{"PUT", "/v1/webhook_endpoint", []field{
			{"url", obj("url", x), false},
			{"method", obj("url", "https://hooks.example.com/in", "method", x), false},
		}},
		{"POST", "/v1/webhook_endpoint/test", []field{{"type", obj("type", x), false}}},
		{"POST", "/v1/events/replay", []field{
			{"status", obj("status", x), false},
			{"type", obj("type", x), false},
			{"created_after", obj("created_after", x), false},
			{"created_before", obj("created_before", x), false},
		}},
		{"POST", "/v1/meters", meter()},
		{"PATCH", "/v1/meters/" + s.meter, []field{{"description", obj("description", x), true}}},
		{"POST", "/v1/meters/" + s.meter + "/alerts", []field{
			{"threshold", alert("threshold", x), false},
			{"window", alert("window", x), false},
			{"account_id", alert("account_id", x), false},
			{"description", alert("description", x), true},
			{"group.region", alert("group", obj("region", x)), true},
			{"group.", alert("group", obj(x, "eu")), false},
		}},
	}
	for _, tg := range targets {
		for _, f := range tg.fields {
			tmpl, err := json.Marshal(f.body)
			if err != nil {
				panic(err)
			}
			for _, hs := range hostileStrings {
				if f.text && !hs.inText {
					continue
				}
				param := f.param
				if strings.HasSuffix(param, ".") {
					param += decoded(hs.literal)
				}
				add(hostileCase{name: tg.method + " " + tg.path + " " + f.param + " " + hs.name, method: tg.method, path: tg.path,
					body: with(string(tmpl), hs.literal), status: 400, code: "invalid_string", param: param})
			}
		}
	}
	// A hostile member name the API does not know: refused for its string before its name.
	add(hostileCase{name: "unknown member named NUL", method: "POST", path: "/v1/accounts",
		body: []byte(`{"name":"x","\u0000":1}`), status: 400, code: "invalid_string", param: "\x00"})
	add(hostileCase{name: "unknown member with invalid UTF-8", method: "POST", path: "/v1/accounts",
		body: []byte("{\"name\":\"x\",\"\xff\":1}"), status: 400, code: "invalid_string", param: "\uFFFD"})
	return cs
}

// TestHostileInput sends every case to the API on PostgreSQL and on SQLite: never a 5xx,
// always the §4 envelope with the code and param named, and nothing written.
func TestHostileInput(t *testing.T) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			f := &fakeDispatcher{}
			h := newHarnessOn(t, db, withFakeDispatcher(f), func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true })
			sk := h.key[skSandbox]
			seed := hostileSeed{account: h.newObjAccount("Target")}
			seed.deal, _ = h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": seed.account}})["id"].(string)
			h.mustObj(http.StatusOK, "PUT", "/v1/webhook_endpoint", map[string]any{"url": "https://127.0.0.1:9/hook"})
			seed.endpoint = h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints", nil)["data"].([]any)[0].(map[string]any)["id"].(string)
			seed.meter = h.mustObj(http.StatusCreated, "POST", "/v1/meters", map[string]any{"key": "target",
				"filter": map[string]any{"metric_name": "calls"}, "aggregation": "sum", "group_by": []any{"region"}})["key"].(string)
			cases := append(hostileCases(seed), moreHostileCases(seed)...)
			cases = append(cases, filterHostileCases(seed)...)
			cases = append(cases, headerHostileCases(seed)...)
			cases = append(cases, orderingHostileCases(seed)...)
			cases = append(cases, urlHostileCases(seed)...)
			cases = append(cases, paceHostileCases(seed)...)
			t.Logf("%s: %d hostile requests", db, len(cases))
			before := h.fingerprint()
			var failed int
			for _, c := range cases {
				r := h.do(c.method, c.path, sk, rawBody(c.body))
				if msg := checkHostile(r, c); msg != "" {
					failed++
					t.Errorf("%s: %s", c.name, msg)
				}
				if after := h.fingerprint(); after != before {
					failed++
					t.Errorf("%s: data changed:\n before %s\n after  %s", c.name, before, after)
					before = after
				}
			}
			t.Logf("%s: %d of %d hostile requests answered wrongly", db, failed, len(cases))
		})
	}
}

// rawBody keeps a nil body nil for harness.do.
func rawBody(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// checkHostile returns what is wrong with r as the answer to c ("" if nothing).
func checkHostile(r response, c hostileCase) string {
	var e map[string]map[string]any
	if err := json.Unmarshal(r.Body, &e); err != nil || e["error"] == nil {
		return fmt.Sprintf("%d without an error envelope: %.200s", r.Status, r.Body)
	}
	code, _ := e["error"]["code"].(string)
	param, _ := e["error"]["param"].(string)
	typ, _ := e["error"]["type"].(string)
	switch {
	case r.Status != c.status || (c.code != "" && code != c.code) || param != c.param:
		return fmt.Sprintf("got %d %s param %.80q, want %d %s param %.80q: %.300s", r.Status, code, param, c.status, c.code, c.param, r.Body)
	case typ != "invalid_request_error" || e["error"]["request_id"] == nil || r.Header.Get("X-Request-Id") == "":
		return fmt.Sprintf("envelope incomplete: %.300s", r.Body)
	}
	return ""
}

// fingerprint sums up every table a request could write: row counts and the latest
// change, read through a second connection so the API's own state is not involved.
func (h *harness) fingerprint() string {
	h.t.Helper()
	db := h.rawDB()
	var out []string
	for _, q := range []string{
		"SELECT COUNT(*) FROM accounts", "SELECT COUNT(*) FROM deals", "SELECT COUNT(*) FROM events",
		"SELECT COUNT(*) FROM webhook_endpoints", "SELECT COUNT(*) FROM replay_jobs", "SELECT COUNT(*) FROM usage_events",
		"SELECT COUNT(*) FROM delivery_attempts", "SELECT COUNT(*) FROM meters", "SELECT MAX(updated_at) FROM meters",
		"SELECT MAX(updated_at) FROM accounts", "SELECT COUNT(*) FROM meter_alerts",
		"SELECT MAX(updated_at) FROM deals", "SELECT MAX(updated_at) FROM webhook_endpoints",
		"SELECT MAX(url) FROM webhook_endpoints", "SELECT COUNT(*) FROM events WHERE status = 'pending'",
	} {
		var v any
		if err := db.Raw(q).Row().Scan(&v); err != nil {
			h.t.Fatalf("%s: %v", q, err)
		}
		out = append(out, fmt.Sprint(v))
	}
	return strings.Join(out, " ")
}

// rawDB is a second connection to the harness's database, opened once.
func (h *harness) rawDB() *gorm.DB {
	h.t.Helper()
	if h.raw != nil {
		return h.raw
	}
	dial := sqlite.Open("file:" + h.dbURL + "?_busy_timeout=10000")
	if strings.HasPrefix(h.dbURL, "postgres") {
		dial = postgres.Open(h.dbURL)
	}
	db, err := gorm.Open(dial, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		h.t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	h.t.Cleanup(func() { _ = sqlDB.Close() })
	h.raw = db
	return db
}

// TestHostileHeaders: header values with control characters or invalid UTF-8 never
// reach a 5xx. net/http refuses control characters itself (400); bytes above 0x7f reach
// authentication and are an invalid key (401).
func TestHostileHeaders(t *testing.T) {
	h := newHarness(t)
	u, err := url.Parse(h.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	sk := h.key[skSandbox]
	cases := []struct {
		name, header string
		status       int
	}{
		{"key with invalid UTF-8", "Authorization: Bearer sk_sandbox_\xff\xfe", 401},
		{"key of 8 KiB", "Authorization: Bearer sk_" + strings.Repeat("\xc0", 8192), 401},
		{"key with NUL", "Authorization: Bearer sk\x00x", 400},
		{"key with control character", "Authorization: Bearer sk\x01x", 400},
		{"key with DEL", "Authorization: Bearer sk\x7fx", 400},
		{"content type with invalid UTF-8", "Authorization: Bearer " + sk + "\r\nContent-Type: application/\xff", 200},
		{"forwarded proto with invalid UTF-8", "Authorization: Bearer " + sk + "\r\nX-Forwarded-Proto: \xff", 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET /v1/accounts HTTP/1.1\r\nHost: %s\r\n%s\r\nConnection: close\r\n\r\n", u.Host, c.header)
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, c.status, body)
			}
			if c.status == 401 && !bytes.Contains(body, []byte(`"invalid_api_key"`)) {
				t.Fatalf("not the §4 envelope: %s", body)
			}
		})
	}
}

package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// bodyRoute is a route that takes a JSON body, with a valid body to start from.
type bodyRoute struct {
	method, path string
	base         map[string]any
}

func (s hostileSeed) bodyRoutes() []bodyRoute {
	return []bodyRoute{
		{"POST", "/v1/accounts", map[string]any{"name": "Hostile Ltd"}},
		{"PATCH", "/v1/accounts/" + s.account, map[string]any{}},
		{"POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": s.account}}},
		{"PATCH", "/v1/deals/" + s.deal, map[string]any{}},
		{"PUT", "/v1/webhook_endpoint", map[string]any{"url": "https://127.0.0.1:9/hook"}},
		{"POST", "/v1/webhook_endpoint/test", map[string]any{}},
		{"POST", "/v1/events/replay", map[string]any{"status": "failed"}},
		{"POST", "/v1/meters", map[string]any{"key": "hostile", "filter": map[string]any{"metric_name": "calls"}, "aggregation": "sum"}},
		{"PATCH", "/v1/meters/" + s.meter, map[string]any{"description": "x"}},
		{"POST", "/v1/meters/" + s.meter + "/alerts", map[string]any{"threshold": 10, "window": "day"}},
	}
}

// actionRoutes take no parameters: no body or {}.
func (s hostileSeed) actionRoutes() []string {
	out := []string{
		"/v1/accounts/" + s.account + "/activate", "/v1/webhook_endpoint/rotate_secret",
	}
	for _, a := range []string{"submit", "approve", "sign", "activate", "void"} {
		out = append(out, "/v1/deals/"+s.deal+"/"+a)
	}
	return out
}

// hostileNumbers are JSON numbers no numeric field may take: too large or too small to
// write out, or with an exponent longer than any number needs.
var hostileNumbers = []string{
	"1e999", "-1e999", "1e131000", "1e-99999", "-1e-131000", "1E+99999999999999999999",
	"1e-99999999999999999999", "0.0000000000000000000000000000000000000000000000000000000000000000001",
	"123456789012345678901234567890123456789012345678901234567890123456789",
}

// wrongTypes maps a JSON type to values of every other type.
var wrongTypes = map[string][]string{
	"string": {`1`, `1e999`, `true`, `{}`, `{"a":"b"}`, `[]`, `["x"]`},
	"object": {`"x"`, `1`, `true`, `[]`, `[{"id":"x"}]`},
	"array":  {`"x"`, `1`, `true`, `{}`, `{"0":{}}`},
	"bool":   {`"true"`, `1`, `0`, `{}`, `[]`, `"yes"`},
}

// typedField is a member of a route's body, its JSON type and the param a fault names.
type typedField struct {
	path  []any // keys and indexes from the body's root
	typ   string
	param string
}

func (s hostileSeed) typedFields() map[string][]typedField {
	str := func(param string, path ...any) typedField { return typedField{path, "string", param} }
	acct := []typedField{
		str("name", "name"), str("external_id", "external_id"), str("domain", "domain"),
		str("billing_email", "billing_email"), {[]any{"properties"}, "object", "properties"},
	}
	deal := []typedField{
		{[]any{"customer"}, "object", "customer"}, str("customer.id", "customer", "id"),
		{[]any{"skus"}, "array", "skus"}, {[]any{"terms"}, "array", "terms"},
	}
	for _, k := range []string{"contract_activates_date", "net_price", "net_price_currency", "net_price_precision",
		"original_net_price", "original_net_price_currency", "original_net_price_precision",
		"opportunity_id", "signed_contract_url"} {
		deal = append(deal, str(k, k))
	}
	for _, k := range []string{"id", "code", "name", "quantity", "unit_price"} {
		deal = append(deal, str("skus[0]."+k, "skus", 0, k))
	}
	for _, k := range []string{"id", "name", "description", "start_date", "end_date", "billing_frequency"} {
		deal = append(deal, str("terms[0]."+k, "terms", 0, k))
	}
	// value_key is refused for the base's sum whatever its type: the fault names it too.
	meter := []typedField{
		str("key", "key"), str("description", "description"), {[]any{"filter"}, "object", "filter"},
		str("filter.metric_name", "filter", "metric_name"), str("filter.product", "filter", "product"),
		str("aggregation", "aggregation"), str("value_key", "value_key"),
		{[]any{"group_by"}, "array", "group_by"}, str("group_by[0]", "group_by", 0),
	}
	return map[string][]typedField{
		"/v1/accounts":              acct,
		"/v1/accounts/" + s.account: acct,
		"/v1/deals":                 append(deal, typedField{[]any{"submit"}, "bool", "submit"}),
		"/v1/deals/" + s.deal:       deal,
		"/v1/webhook_endpoint":      {str("url", "url"), str("method", "method"), {[]any{"enabled"}, "bool", "enabled"}},
		"/v1/webhook_endpoint/test": {str("type", "type")},
		"/v1/events/replay":         {str("status", "status"), str("type", "type")},
		"/v1/meters":                meter,
		"/v1/meters/" + s.meter:     {str("description", "description")},
		"/v1/meters/" + s.meter + "/alerts": {
			str("window", "window"), str("account_id", "account_id"), str("description", "description"),
			{[]any{"group"}, "object", "group"}, str("group.region", "group", "region"),
		},
	}
}

// set returns base with the member at path holding the raw JSON v (spliced in as text:
// v may be deeper than encoding/json accepts); a missing sku or term is made from a
// valid one.
func set(base map[string]any, path []any, v string) []byte {
	const hole = "@@hole@@"
	b, _ := json.Marshal(base)
	var root any
	_ = json.Unmarshal(b, &root)
	var cur any = root
	for i, p := range path {
		last := i == len(path)-1
		switch k := p.(type) {
		case string:
			m := cur.(map[string]any)
			if last {
				m[k] = hole
				break
			}
			if _, ok := m[k]; !ok {
				if _, isIndex := path[i+1].(int); isIndex {
					m[k] = []any{validItem(k)}
				} else {
					m[k] = map[string]any{}
				}
			}
			cur = m[k]
		case int:
			a := cur.([]any)
			if last {
				a[k] = hole
				break
			}
			cur = a[k]
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		panic(err)
	}
	return []byte(strings.Replace(string(out), `"`+hole+`"`, v, 1))
}

func validItem(list string) map[string]any {
	if list == "skus" {
		return map[string]any{"code": "c", "name": "n", "quantity": "1", "unit_price": "2"}
	}
	return map[string]any{"name": "n", "billing_frequency": "monthly"}
}

// nested is value inside depth arrays.
func nested(depth int, value string) string {
	return strings.Repeat("[", depth) + value + strings.Repeat("]", depth)
}

// moreHostileCases: deep nesting, hostile numbers, wrong types, overlong strings and
// bodies that are not objects, on every route with a body or a numeric query parameter.
func moreHostileCases(s hostileSeed) []hostileCase {
	var cs []hostileCase
	add := func(c hostileCase) { cs = append(cs, c) }
	invalidJSON := func(name, method, path string, body []byte) {
		add(hostileCase{name: name, method: method, path: path, body: body, status: 400, code: "invalid_json"})
	}

	// Deep nesting: past the limit of the API's bodies (64) and far past encoding/json's
	// (10,000), 100,000 levels within the 1 MiB limit, at the root and under a member.
	for _, depth := range []int{65, 10_001, 100_000} {
		for _, r := range s.bodyRoutes() {
			invalidJSON(fmt.Sprintf("%s %s nested %d", r.method, r.path, depth), r.method, r.path, []byte(nested(depth, `"x"`)))
			for k := range r.base {
				invalidJSON(fmt.Sprintf("%s %s %s nested %d", r.method, r.path, k, depth), r.method, r.path,
					set(r.base, []any{k}, nested(depth, "\"\xff\"")))
			}
			invalidJSON(fmt.Sprintf("%s %s objects nested %d", r.method, r.path, depth), r.method, r.path,
				[]byte(strings.Repeat(`{"a":`, depth)+`"\u0000"`+strings.Repeat("}", depth)))
		}
		for _, p := range s.actionRoutes() {
			invalidJSON(fmt.Sprintf("POST %s nested %d", p, depth), "POST", p, []byte(`{"a":`+nested(depth, "1")+`}`))
		}
	}
	for _, depth := range []int{10_001, 100_000} { // usage metadata is free-form up to encoding/json's limit
		invalidJSON(fmt.Sprintf("POST /v1/usage/events metadata nested %d", depth), "POST", "/v1/usage/events",
			[]byte(`{"transaction_id":"hostile","mode":"increment","event_metrics":[{"account_id":"`+s.account+`","product":"api","metric_name":"calls","metric_value":1,"metric_resolution":"day","metadata":{"a":`+nested(depth, "1")+`}}]}`))
	}

	// Bodies that are not one object.
	for _, r := range s.bodyRoutes() {
		for _, b := range []string{`null`, `[]`, `[{}]`, `1`, `1e999`, `"x"`, `true`, `{}{}`, `{} 1`, `{"a":1,}`, `{`} {
			invalidJSON(r.method+" "+r.path+" body "+b, r.method, r.path, []byte(b))
		}
	}
	for _, p := range s.actionRoutes() {
		for _, b := range []string{`null`, `[]`, `1`, `"x"`, `{"a":1}`} {
			c := hostileCase{name: "POST " + p + " body " + b, method: "POST", path: p, body: []byte(b), status: 400, code: "invalid_json"}
			if b == `{"a":1}` {
				c.code, c.param = "unknown_parameter", "a"
			}
			add(c)
		}
	}

	// Hostile numbers where a number is accepted: account properties and usage metadata.
	for _, n := range hostileNumbers {
		add(hostileCase{name: "POST /v1/accounts properties.n " + n, method: "POST", path: "/v1/accounts",
			body: []byte(`{"name":"N Ltd","properties":{"n":` + n + `}}`), status: 400, code: "invalid_number", param: "properties.n"})
		add(hostileCase{name: "PATCH /v1/accounts properties.n " + n, method: "PATCH", path: "/v1/accounts/" + s.account,
			body: []byte(`{"properties":{"n":` + n + `}}`), status: 400, code: "invalid_number", param: "properties.n"})
		add(hostileCase{name: "POST /v1/usage/events metadata.n " + n, method: "POST", path: "/v1/usage/events",
			body:   []byte(`{"transaction_id":"hostile","mode":"increment","event_metrics":[{"account_id":"` + s.account + `","product":"api","metric_name":"calls","metric_value":1,"metric_resolution":"day","metadata":{"n":` + n + `}}]}`),
			status: 400, code: "invalid_number", param: "event_metrics[0].metadata.n"})
		add(hostileCase{name: "POST /v1/usage/events metric_value " + n, method: "POST", path: "/v1/usage/events",
			body:   []byte(`{"transaction_id":"hostile","mode":"increment","event_metrics":[{"account_id":"` + s.account + `","product":"api","metric_name":"calls","metric_value":` + n + `,"metric_resolution":"day"}]}`),
			status: 400, param: "event_metrics[0].metric_value"})
		// Replay filters take Unix seconds as a number.
		for _, k := range []string{"created_after", "created_before"} {
			add(hostileCase{name: "POST /v1/events/replay " + k + " " + n, method: "POST", path: "/v1/events/replay",
				body: []byte(`{"` + k + `":` + n + `}`), status: 400, code: "parameter_invalid", param: k})
		}
	}
	// A usage alert's threshold: a number or a decimal string, within §15's bounds either way.
	for _, n := range hostileNumbers {
		for _, lit := range []string{n, `"` + n + `"`} {
			add(hostileCase{name: "POST alerts threshold " + lit, method: "POST", path: "/v1/meters/" + s.meter + "/alerts",
				body: []byte(`{"threshold":` + lit + `,"window":"day"}`), status: 400, code: "invalid_number", param: "threshold"})
		}
	}
	for _, v := range []string{`true`, `{}`, `[]`, `[1]`, `""`, `"1e"`, `"0x10"`, `"NaN"`, `"Infinity"`, `"-1"`, `0`, `-0.0`} {
		add(hostileCase{name: "POST alerts threshold " + v, method: "POST", path: "/v1/meters/" + s.meter + "/alerts",
			body: []byte(`{"threshold":` + v + `,"window":"day"}`), status: 400, code: "parameter_invalid", param: "threshold"})
	}
	// Decimal strings given as numbers, hostile or not, are the wrong type.
	for _, n := range append([]string{"1", "1.5"}, hostileNumbers...) {
		for _, k := range []string{"net_price", "original_net_price", "net_price_precision"} {
			add(hostileCase{name: "POST /v1/deals " + k + " as number " + n, method: "POST", path: "/v1/deals",
				body:   []byte(`{"customer":{"id":"` + s.account + `"},"` + k + `":` + n + `}`),
				status: 400, code: "parameter_invalid", param: k})
		}
		for _, k := range []string{"quantity", "unit_price"} {
			add(hostileCase{name: "PATCH /v1/deals skus[0]." + k + " as number " + n, method: "PATCH", path: "/v1/deals/" + s.deal,
				body:   []byte(`{"skus":[{"code":"c","name":"n","quantity":"1","unit_price":"2","` + k + `":` + n + `}]}`),
				status: 400, code: "parameter_invalid", param: "skus[0]." + k})
		}
	}
	// Numeric query parameters.
	for _, l := range []string{"/v1/accounts", "/v1/deals", "/v1/events", "/v1/usage/events", "/v1/usage/summary?resolution=day",
		"/v1/meters", "/v1/meters/" + s.meter + "/values?" + meterValuesQuery} {
		sep := "?"
		if strings.Contains(l, "?") {
			sep = "&"
		}
		max := "101"
		if strings.Contains(l, "summary") || strings.Contains(l, "values") {
			max = "1001"
		}
		for _, v := range append([]string{"0", "-1", max, "1.5", "1e2", "0x10", "99999999999999999999"}, hostileNumbers...) {
			v = strings.ReplaceAll(v, "+", "%2B")
			add(hostileCase{name: "GET " + l + " limit=" + v, method: "GET", path: l + sep + "limit=" + v,
				status: 400, code: "parameter_invalid", param: "limit"})
		}
		for _, p := range []string{"created_after", "created_before", "from", "to"} {
			if !(strings.HasPrefix(l, "/v1/events") && strings.HasPrefix(p, "created") || strings.HasPrefix(l, "/v1/usage") && !strings.HasPrefix(p, "created")) {
				continue
			}
			for _, v := range []string{"1e999", "-1", "99999999999999999999", "1e3"} {
				add(hostileCase{name: "GET " + l + " " + p + "=" + v, method: "GET", path: l + sep + p + "=" + v,
					status: 400, code: "parameter_invalid", param: p})
			}
		}
	}

	// Every member, every wrong JSON type.
	fields := s.typedFields()
	for _, r := range s.bodyRoutes() {
		for _, f := range fields[r.path] {
			for _, v := range wrongTypes[f.typ] {
				add(hostileCase{name: fmt.Sprintf("%s %s %s = %s", r.method, r.path, f.param, v), method: r.method, path: r.path,
					body: set(r.base, f.path, v), status: 400, code: "parameter_invalid", param: f.param})
			}
		}
	}

	// Overlong strings: one past each limit, and 900 KiB.
	huge := strings.Repeat("a", 900<<10)
	for _, r := range s.bodyRoutes() {
		for _, f := range fields[r.path] {
			if f.typ != "string" {
				continue
			}
			limit := 255
			switch f.param {
			case "signed_contract_url", "url":
				limit = 2048
			case "terms[0].description":
				limit = 5000
			case "key":
				limit = 64 // a meter's
			case "description":
				limit = 1000 // a meter's
			}
			for _, n := range []int{limit + 1, len(huge)} {
				v, _ := json.Marshal(huge[:n])
				add(hostileCase{name: fmt.Sprintf("%s %s %s of %d characters", r.method, r.path, f.param, n),
					method: r.method, path: r.path, body: set(r.base, f.path, string(v)), status: 400, param: f.param})
			}
		}
	}
	for _, p := range []string{"/v1/accounts", "/v1/accounts/" + s.account} {
		method := "POST"
		if p != "/v1/accounts" {
			method = "PATCH"
		}
		name := `"name":"Long Ltd",`
		if method == "PATCH" {
			name = ""
		}
		key41 := strings.Repeat("k", 41)
		for _, c := range []struct{ body, param string }{
			{`{` + name + `"properties":{"` + key41 + `":"v"}}`, "properties." + key41},
			{`{` + name + `"properties":{"k":"` + strings.Repeat("v", 501) + `"}}`, "properties.k"},
			{`{` + name + `"properties":{"k":"` + huge + `"}}`, "properties.k"},
			{`{` + name + `"properties":{"` + huge + `":"v"}}`, "properties." + huge},
		} {
			add(hostileCase{name: fmt.Sprintf("%s %s properties overlong (%d bytes)", method, p, len(c.body)), method: method, path: p,
				body: []byte(c.body), status: 400, param: c.param})
		}
	}
	for _, k := range []string{"account_id", "product", "metric_name", "transaction_id"} {
		for _, n := range []int{256, len(huge)} {
			m := map[string]any{"account_id": s.account, "product": "api", "metric_name": "calls", "metric_value": 1, "metric_resolution": "day"}
			body := map[string]any{"transaction_id": "hostile", "mode": "increment", "event_metrics": []any{m}}
			param := "event_metrics[0]." + k
			if k == "transaction_id" {
				body[k] = huge[:n]
				param = k
			} else {
				m[k] = huge[:n]
			}
			b, _ := json.Marshal(body)
			add(hostileCase{name: fmt.Sprintf("POST /v1/usage/events %s of %d characters", k, n), method: "POST", path: "/v1/usage/events",
				body: b, status: 400, param: param})
		}
	}
	add(hostileCase{name: "POST /v1/usage/events metadata string of 900 KiB", method: "POST", path: "/v1/usage/events",
		body:   []byte(`{"transaction_id":"hostile","mode":"increment","event_metrics":[{"account_id":"` + s.account + `","product":"api","metric_name":"calls","metric_value":1,"metric_resolution":"day","metadata":{"k":"` + huge + `"}}]}`),
		status: 400, param: "event_metrics[0].metadata"})
	// The values query's times, RFC 3339 only: the other bound stays valid.
	for p, other := range map[string]string{"from": "to=2026-11-02T00:00:00Z", "to": "from=2026-11-01T00:00:00Z"} {
		for _, v := range []string{"1e999", "-1", "99999999999999999999", "1761955200", "2026-11-01", "2026-11-01T00:00:00"} {
			add(hostileCase{name: "GET values " + p + "=" + v, method: "GET",
				path:   "/v1/meters/" + s.meter + "/values?window=day&" + other + "&" + p + "=" + v,
				status: 400, code: "parameter_invalid", param: p})
		}
	}
	return cs
}

// BenchmarkHostileCount reports the hostile-input suite's size, the requests it sends
// each database (first_table_requests from the first table, more_requests from nesting,
// numbers, types and lengths): go test -run '^$' -bench HostileCount -benchtime 1x ./api/
func BenchmarkHostileCount(b *testing.B) {
	s := hostileSeed{account: "00000000-0000-4000-8000-000000000001", deal: "00000000-0000-4000-8000-000000000002", meter: "target"}
	var first, more int
	for b.Loop() {
		first, more = len(hostileCases(s)), len(moreHostileCases(s))
	}
	b.ReportMetric(float64(first+more), "requests_per_db")
	b.ReportMetric(float64(first), "first_table_requests")
	b.ReportMetric(float64(more), "more_requests")
}

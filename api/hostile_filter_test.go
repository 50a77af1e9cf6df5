package api_test

import (
	"fmt"
	"strings"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// maxDepthFilter is a filter of webhookfilter.MaxDepth levels ($not in $not …, the
// innermost a condition of depth levels in all), padded with a long string value to
// about size bytes.
func maxDepthFilter(depth, size int) string {
	inner := `{"deal.status":{"$eq":"@"}}`
	f := inner
	for i := 2; i < depth; i++ {
		f = `{"$not":` + f + `}`
	}
	pad := size - len(f) + 1
	if pad < 0 {
		pad = 0
	}
	return strings.Replace(f, "@", strings.Repeat("x", pad), 1)
}

// filterHostileCases are the filters of CONTRACT §25 no route may take: past the size,
// depth, item and step bounds, with numbers out of §15's bounds, NUL and invalid UTF-8,
// each sent to the create, the PATCH and the filter test of the plural routes: a 400 on
// the JSON Pointer of the fault (invalid_string on the member's path for the strings
// every body refuses), never a 5xx, nothing written.
func filterHostileCases(s hostileSeed) []hostileCase {
	type hostileFilter struct {
		name, filter string
		code, param  string
	}
	var filters []hostileFilter
	bound := func(name, filter string) {
		param := "filter"
		if _, err := webhookfilter.Parse([]byte(filter)); err != nil {
			param = err.(*webhookfilter.Fault).Pointer
		} else {
			panic(name + ": the evaluator takes this filter")
		}
		filters = append(filters, hostileFilter{name, filter, "parameter_invalid", param})
	}
	// 4 KiB filters of maximum depth: one byte too long, one level too deep.
	bound("4 KiB + 1 of maximum depth", maxDepthFilter(webhookfilter.MaxDepth, webhookfilter.MaxBytes+1))
	bound("maximum depth + 1 within 4 KiB", maxDepthFilter(webhookfilter.MaxDepth+1, webhookfilter.MaxBytes-64))
	items := make([]string, webhookfilter.MaxItems+1)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	bound("$in of 101 items", `{"deal.status":{"$in":[`+strings.Join(items, ",")+`]}}`)
	for _, n := range hostileNumbers {
		bound("number "+n+" in $eq", `{"deal.net_price":`+n+`}`)
		bound("number "+n+" in $in", `{"deal.status":{"$in":["draft","signed","active",`+n+`]}}`)
		bound("number "+n+" in $gte", `{"deal.net_price":{"$gte":`+n+`}}`)
	}
	bound("not an object", `["deal.status"]`)
	bound("unknown operator", `{"deal.status":{"$regex":"."}}`)
	bound("range on a bool", `{"deal.status":{"$gt":true}}`)
	bound("path with a control", `{"deal.st\u0001atus":"x"}`)
	bound("empty $or", `{"$or":[]}`)
	for _, hs := range hostileStrings {
		if !hs.inText {
			continue // controls inside values are text a filter may compare
		}
		filters = append(filters,
			hostileFilter{"value " + hs.name, `{"deal.status":` + hs.literal + `}`, "invalid_string", "filter.deal.status"},
			hostileFilter{"path " + hs.name, `{` + hs.literal + `:"x"}`, "invalid_string", "filter." + decoded(hs.literal)},
			hostileFilter{"$in item " + hs.name, `{"deal.status":{"$in":["a",` + hs.literal + `]}}`, "invalid_string", "filter.deal.status.$in[1]"})
	}

	var cs []hostileCase
	for _, f := range filters {
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/v1/webhook_endpoints", `{"url":"https://127.0.0.1:9/filtered","filter":@}`},
			{"PATCH", "/v1/webhook_endpoints/" + s.endpoint, `{"filter":@}`},
			{"POST", "/v1/webhook_endpoints/filter_test", `{"filter":@,"payload":{"deal":{"status":"signed"}}}`},
		} {
			cs = append(cs, hostileCase{name: fmt.Sprintf("%s %s filter %s", r.method, r.path, f.name), method: r.method, path: r.path,
				body: []byte(strings.Replace(r.body, "@", f.filter, 1)), status: 400, code: f.code, param: f.param})
		}
	}
	// The filter test's payload: free JSON, so §15's number rule holds in it as in metadata
	// (CONTRACT §21), wherever the number is; and a member name given twice where the
	// filter reads it has no defined value.
	for _, n := range append(hostileNumbers, "1"+strings.Repeat("7", 900_000-1)) {
		short := n
		if len(short) > 24 {
			short = fmt.Sprintf("%.12s…(%d)", n, len(n))
		}
		for _, at := range []struct{ payload, param string }{
			{`{"deal":{"net_price":@}}`, "payload.deal.net_price"},
			{`{"deal":{"skus":[{"quantity":1},{"quantity":@}]},"x":1e999}`, "payload.deal.skus[1].quantity"},
			{`@`, "payload"},
		} {
			cs = append(cs, hostileCase{name: "filter_test payload number " + short + " at " + at.param, method: "POST",
				path: "/v1/webhook_endpoints/filter_test", status: 400, code: "invalid_number", param: at.param,
				body: []byte(`{"filter":{"deal.net_price":{"$gte":"1000"}},"payload":` + strings.Replace(at.payload, "@", n, 1) + `}`)})
		}
	}
	for _, c := range []struct{ filter, payload string }{
		{`{"deal.status":"signed"}`, `{"deal":{"status":"signed","status":"draft"}}`},
		{`{"deal":{"$eq":{"status":"signed"}}}`, `{"deal":{"id":1,"status":"signed","status":"signed"}}`},
	} {
		cs = append(cs, hostileCase{name: "filter_test payload names twice " + c.filter, method: "POST",
			path: "/v1/webhook_endpoints/filter_test", status: 400, code: "parameter_invalid", param: "payload",
			body: []byte(`{"filter":` + c.filter + `,"payload":` + c.payload + `}`)})
	}
	// The filter test's other members.
	for _, hs := range hostileStrings {
		if hs.inText {
			cs = append(cs, hostileCase{name: "filter_test payload " + hs.name, method: "POST", path: "/v1/webhook_endpoints/filter_test",
				body: []byte(`{"filter":{},"payload":{"deal":{"status":` + hs.literal + `}}}`), status: 400, code: "invalid_string", param: "payload.deal.status"})
		}
		cs = append(cs, hostileCase{name: "filter_test event_id " + hs.name, method: "POST", path: "/v1/webhook_endpoints/filter_test",
			body: []byte(`{"filter":{},"event_id":` + hs.literal + `}`), status: 400, code: "invalid_string", param: "event_id"})
	}
	return cs
}

package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// An endpoint's filter (CONTRACT §25) is set on create, shown on the object, changed and
// removed by PATCH (null or {}), refused with the JSON Pointer of its fault, and unknown
// to the §8 singular routes.
func TestWebhookEndpointFilterField(t *testing.T) {
	h, rc := newReceiving(t)
	filter := map[string]any{"deal.net_price": map[string]any{"$gte": "1000"}}
	ep := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/f", "filter": filter})
	id := ep["id"].(string)
	if got, _ := json.Marshal(ep["filter"]); string(got) != `{"deal.net_price":{"$gte":"1000"}}` {
		t.Fatalf("created filter %s", got)
	}
	if got, _ := json.Marshal(h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+id, nil)["filter"]); string(got) != `{"deal.net_price":{"$gte":"1000"}}` {
		t.Fatalf("read filter %s", got)
	}
	// A PATCH without filter keeps it.
	if got := h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"description": "big deals"}); got["filter"] == nil {
		t.Fatalf("PATCH without filter removed it: %v", got)
	}
	for _, removal := range []string{`{"filter":null}`, `{"filter":{}}`} {
		h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"filter": filter})
		r := h.do("PATCH", "/v1/webhook_endpoints/"+id, h.key[skSandbox], []byte(removal))
		if r.Status != http.StatusOK {
			t.Fatalf("PATCH %s: %d %s", removal, r.Status, r.Body)
		}
		if f, ok := r.json(t)["filter"]; !ok || f != nil {
			t.Fatalf("PATCH %s: filter %v (present %v), want null", removal, f, ok)
		}
		if f := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+id, nil)["filter"]; f != nil {
			t.Fatalf("after PATCH %s the endpoint still has filter %v", removal, f)
		}
	}
	if got := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/g"}); got["filter"] != nil {
		t.Fatalf("an endpoint without filter shows %v", got["filter"])
	}

	bad := []byte(`{"filter":{"deal.status":{"$in":["draft","signed","active",1e999]}}}`)
	for _, req := range []struct{ method, path string }{{"POST", "/v1/webhook_endpoints"}, {"PATCH", "/v1/webhook_endpoints/" + id}} {
		body := bad
		if req.method == "POST" {
			body = []byte(`{"url":"` + rc.URL + `/h",` + string(bad[1:]))
		}
		r := h.do(req.method, req.path, h.key[skSandbox], body)
		expectError(t, r, http.StatusBadRequest, "parameter_invalid")
		if p := r.json(t)["error"].(map[string]any)["param"]; p != "filter/deal.status/$in/3" {
			t.Errorf("%s: param %v, want filter/deal.status/$in/3 (%s)", req.method, p, r.Body)
		}
	}
	r := h.do("PUT", "/v1/webhook_endpoint", h.key[skSandbox], map[string]any{"url": rc.URL + "/s", "filter": filter})
	expectError(t, r, http.StatusBadRequest, "unknown_parameter")
}

// A filter that rejects an event's payload leaves its endpoint without a delivery, and
// the event detail lists the endpoint in filtered_endpoint_ids (CONTRACT §25).
func TestWebhookFilterOnEventDetail(t *testing.T) {
	h, rc := newReceiving(t)
	picky := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/picky",
		"filter": map[string]any{"event.type": "deal-signed"}})["id"].(string)
	keen := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/keen",
		"filter": map[string]any{"event.type": map[string]any{"$in": []any{"deal-created", "deal-signed"}}}})["id"].(string)
	account := h.newObjAccount("Filtered")
	deal := h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": account}})["id"].(string)
	evs := h.mustObj(http.StatusOK, "GET", "/v1/events?object_id="+deal, nil)["data"].([]any)
	if len(evs) != 1 {
		t.Fatalf("events of the deal: %v", evs)
	}
	listed := evs[0].(map[string]any)
	detail := h.mustObj(http.StatusOK, "GET", "/v1/events/"+listed["id"].(string), nil)
	for where, ev := range map[string]map[string]any{"list": listed, "detail": detail} {
		if got, _ := json.Marshal(ev["filtered_endpoint_ids"]); string(got) != `["`+picky+`"]` {
			t.Errorf("%s: filtered_endpoint_ids %s, want [%s]", where, got, picky)
		}
	}
	ds := detail["deliveries"].([]any)
	if len(ds) != 1 || ds[0].(map[string]any)["endpoint_id"] != keen {
		t.Fatalf("deliveries %v, want one, to %s", ds, keen)
	}
	acct := h.mustObj(http.StatusOK, "GET", "/v1/events?object_id="+account, nil)["data"].([]any)[0].(map[string]any)
	if got, _ := json.Marshal(acct["filtered_endpoint_ids"]); string(got) != `["`+picky+`","`+keen+`"]` || acct["status"] != "skipped" {
		t.Fatalf("account event every endpoint filtered out: filtered %s, status %v; want both, skipped", got, acct["status"])
	}
}

// POST /v1/webhook_endpoints/filter_test evaluates a filter on a payload or on a stored
// event of the caller's environment, storing nothing (CONTRACT §25).
func TestWebhookFilterTest(t *testing.T) {
	h := newHarness(t)
	account := h.newObjAccount("Probe")
	evID := h.mustObj(http.StatusOK, "GET", "/v1/events?object_id="+account, nil)["data"].([]any)[0].(map[string]any)["id"].(string)
	live := h.do("POST", "/v1/accounts", h.key["secret live"], map[string]any{"name": "Elsewhere"})
	if live.Status != http.StatusCreated {
		t.Fatalf("live account: %d %s", live.Status, live.Body)
	}
	liveEv := h.do("GET", "/v1/events?object_id="+live.json(t)["id"].(string), h.key["secret live"], nil).json(t)["data"].([]any)[0].(map[string]any)["id"].(string)

	const path = "/v1/webhook_endpoints/filter_test"
	for _, tc := range []struct {
		name, body string
		match      bool
	}{
		{"payload match", `{"filter":{"deal.status":"signed"},"payload":{"deal":{"status":"signed"}}}`, true},
		{"payload no match", `{"filter":{"deal.status":"signed"},"payload":{"deal":{"status":"draft"}}}`, false},
		{"empty filter takes everything", `{"filter":{},"payload":{}}`, true},
		{"decimal string against a number", `{"filter":{"deal.net_price":{"$gte":1000}},"payload":{"deal":{"net_price":"1000.00"}}}`, true},
		{"longest number in the payload", `{"filter":{"deal.net_price":{"$gte":"1000"}},"payload":{"deal":{"net_price":1e63}}}`, true},
		{"smallest number in the payload", `{"filter":{"deal.net_price":{"$gte":"1000"}},"payload":{"deal":{"net_price":1e-62}}}`, false},
		{"stored event match", `{"filter":{"event.type":"account-created"},"event_id":"` + evID + `"}`, true},
		{"stored event no match", `{"filter":{"event.type":"deal-signed"},"event_id":"` + evID + `"}`, false},
	} {
		r := h.do("POST", path, h.key[skSandbox], []byte(tc.body))
		if r.Status != http.StatusOK || r.json(t)["match"] != tc.match {
			t.Errorf("%s: %d %s, want match %v", tc.name, r.Status, r.Body, tc.match)
		}
	}
	for _, tc := range []struct{ name, body, code, param string }{
		{"both", `{"filter":{},"payload":{},"event_id":"` + evID + `"}`, "parameter_invalid", "event_id"},
		{"neither", `{"filter":{}}`, "parameter_missing", "payload"},
		{"no filter", `{"payload":{}}`, "parameter_missing", "filter"},
		{"bad filter", `{"filter":{"deal.status":{"$in":["a","b","c",1e999]}},"payload":{}}`, "parameter_invalid", "filter/deal.status/$in/3"},
		{"event of another environment", `{"filter":{},"event_id":"` + liveEv + `"}`, "parameter_invalid", "event_id"},
		{"not an event id", `{"filter":{},"event_id":"evt_1"}`, "parameter_invalid", "event_id"},
		{"unknown member", `{"filter":{},"payload":{},"extra":1}`, "unknown_parameter", "extra"},
		// §15's number rule holds in a payload as in any free JSON (CONTRACT §21).
		{"huge number in the payload", `{"filter":{"deal.net_price":{"$gte":"1000"}},"payload":{"deal":{"net_price":1e999}}}`, "invalid_number", "payload.deal.net_price"},
		{"tiny number in an array", `{"filter":{},"payload":{"deal":{"skus":[1,1e-99999]}}}`, "invalid_number", "payload.deal.skus[1]"},
		{"a name given twice where the filter reads", `{"filter":{"deal.status":"x"},"payload":{"deal":{"status":"x","status":"x"}}}`, "parameter_invalid", "payload"},
	} {
		r := h.do("POST", path, h.key[skSandbox], []byte(tc.body))
		expectError(t, r, http.StatusBadRequest, tc.code)
		if p := r.json(t)["error"].(map[string]any)["param"]; p != tc.param {
			t.Errorf("%s: param %v, want %s (%s)", tc.name, p, tc.param, r.Body)
		}
	}
	if r := h.do("POST", path, h.key["public sandbox"], []byte(`{"filter":{},"payload":{}}`)); r.Status != http.StatusForbidden && r.Status != http.StatusUnauthorized {
		t.Fatalf("publishable key: %d %s, want refused", r.Status, r.Body)
	}
}

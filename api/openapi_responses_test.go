package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/models"
)

// call is one request of a scenario and the documented route it must match. Paths and
// bodies may name ids saved by earlier calls as {name}.
type call struct {
	method, path, route string // route "": matches no route (error envelope)
	key                 string // harness key name; "" none; "bogus" an unknown key
	body                any
	status              int
	save                string // remember the answer's "id" (a list's first "id") under this name
	hdr                 []string
	before              func(h *harness, ids map[string]string) // state the call needs
}

var usageBatch = map[string]any{"transaction_id": "tx-openapi-1", "mode": "increment", "event_metrics": []any{
	map[string]any{"account_id": "cust-1", "product": "api", "metric_name": "calls", "metric_value": 12.5, "metric_resolution": "day",
		"metadata": map[string]any{"region": "eu"}},
	map[string]any{"account_id": "cust-1", "product": "api", "metric_name": "calls", "metric_value": 3, "metric_resolution": "hour"},
}}

// openapiScenario drives every documented resource through successes and errors.
func openapiScenario(hookURL string) []call {
	const sk, pk = "secret sandbox", "public sandbox"
	deal := map[string]any{
		"customer": map[string]any{"id": "{account}"}, "contract_activates_date": "2026-01-01",
		"net_price": "19999.00", "net_price_currency": "USD", "net_price_precision": "2",
		"original_net_price": "25000", "original_net_price_currency": "EUR", "original_net_price_precision": "0",
		"opportunity_id": "opp-1", "signed_contract_url": "https://docs.example.com/c.pdf",
		"skus":  []any{map[string]any{"code": "PRO", "name": "Pro", "quantity": "10", "unit_price": "1999.90"}},
		"terms": []any{map[string]any{"name": "SLA", "billing_frequency": "annual", "start_date": "2026-01-01", "end_date": "2026-12-31"}},
	}
	changed := map[string]any{"transaction_id": "tx-openapi-1", "mode": "set", "event_metrics": usageBatch["event_metrics"]}
	// The day usageBatch is received in: the window the meters' values read.
	day := time.Now().UTC().Truncate(24 * time.Hour)
	today := "from=" + day.Format(time.RFC3339) + "&to=" + day.Add(24*time.Hour).Format(time.RFC3339)
	return []call{
		{method: "GET", path: "/v1/whoami", route: "/v1/whoami", key: pk, status: 200},
		{method: "GET", path: "/v1/whoami", route: "/v1/whoami", key: "secret live", status: 200},
		{method: "GET", path: "/v1/openapi.json", route: "/v1/openapi.json", key: pk, status: 200},
		{method: "POST", path: "/v1/accounts", route: "/v1/accounts", key: sk, status: 201, save: "account", body: map[string]any{
			"name": "Globex", "external_id": "gx-1", "domain": "globex.example", "billing_email": "ap@globex.example",
			"properties": map[string]any{"tier": "gold", "seats": 25, "sla": true}}},
		{method: "POST", path: "/v1/accounts", route: "/v1/accounts", key: sk, status: 201, save: "bare", body: map[string]any{"name": "Bare"}},
		{method: "GET", path: "/v1/accounts/{account}", route: "/v1/accounts/{id}", key: sk, status: 200},
		{method: "PATCH", path: "/v1/accounts/{account}", route: "/v1/accounts/{id}", key: sk, status: 200,
			body: map[string]any{"properties": map[string]any{"seats": 30, "sla": nil}}},
		{method: "GET", path: "/v1/accounts?limit=1", route: "/v1/accounts", key: sk, status: 200},
		{method: "GET", path: "/v1/accounts?status=draft&external_id=gx-1", route: "/v1/accounts", key: sk, status: 200},
		{method: "POST", path: "/v1/deals", route: "/v1/deals", key: sk, status: 201, save: "deal", body: deal},
		{method: "POST", path: "/v1/deals", route: "/v1/deals", key: sk, status: 201, save: "deal2",
			body: map[string]any{"customer": map[string]any{"id": "{bare}"}, "submit": true}},
		{method: "GET", path: "/v1/deals/{deal}", route: "/v1/deals/{id}", key: sk, status: 200},
		{method: "PATCH", path: "/v1/deals/{deal}", route: "/v1/deals/{id}", key: sk, status: 200, body: map[string]any{"opportunity_id": "opp-2"}},
		{method: "POST", path: "/v1/deals/{deal}/submit", route: "/v1/deals/{id}/submit", key: sk, status: 200},
		{method: "POST", path: "/v1/deals/{deal}/approve", route: "/v1/deals/{id}/approve", key: sk, status: 200, body: map[string]any{}},
		{method: "POST", path: "/v1/deals/{deal}/sign", route: "/v1/deals/{id}/sign", key: sk, status: 200},
		{method: "POST", path: "/v1/deals/{deal}/activate", route: "/v1/deals/{id}/activate", key: sk, status: 200},
		{method: "POST", path: "/v1/deals/{deal}/submit", route: "/v1/deals/{id}/submit", key: sk, status: 409},
		{method: "POST", path: "/v1/deals/{deal2}/void", route: "/v1/deals/{id}/void", key: sk, status: 200},
		{method: "PATCH", path: "/v1/deals/{deal2}", route: "/v1/deals/{id}", key: sk, status: 409, body: map[string]any{"opportunity_id": "x"}},
		{method: "GET", path: "/v1/deals?limit=1", route: "/v1/deals", key: sk, status: 200},
		{method: "GET", path: "/v1/deals?status=void&customer={bare}", route: "/v1/deals", key: sk, status: 200},
		{method: "POST", path: "/v1/deals", route: "/v1/deals", key: sk, status: 400,
			body: map[string]any{"customer": map[string]any{"id": "{bare}", "name": "x"}, "status": "active", "net_price": 5}},
		{method: "POST", path: "/v1/accounts/{bare}/activate", route: "/v1/accounts/{id}/activate", key: sk, status: 200},
		{method: "DELETE", path: "/v1/accounts/{bare}", route: "/v1/accounts/{id}", key: sk, status: 200},
		{method: "PATCH", path: "/v1/accounts/{bare}", route: "/v1/accounts/{id}", key: sk, status: 409, body: map[string]any{"name": "B"}},
		{method: "GET", path: "/v1/accounts/00000000-0000-4000-8000-000000000000", route: "/v1/accounts/{id}", key: sk, status: 404},
		{method: "POST", path: "/v1/accounts", route: "/v1/accounts", key: sk, status: 400, body: map[string]any{"id": "x", "bogus": 1}},
		{method: "POST", path: "/v1/accounts", route: "/v1/accounts", key: sk, status: 415, body: []byte(`{"name":"x"}`), hdr: []string{"Content-Type", "text/plain"}},
		{method: "POST", path: "/v1/accounts", route: "/v1/accounts", key: sk, status: 413, body: []byte(`{"name":"` + strings.Repeat("a", 1<<20) + `"}`)},
		{method: "GET", path: "/v1/accounts", route: "/v1/accounts", key: "", status: 401},
		{method: "GET", path: "/v1/accounts", route: "/v1/accounts", key: "bogus", status: 401},
		{method: "GET", path: "/v1/accounts", route: "/v1/accounts", key: pk, status: 403},
		{method: "GET", path: "/v1/nothing", key: sk, status: 404},
		{method: "PUT", path: "/v1/accounts", key: sk, status: 405},

		{method: "POST", path: "/v1/usage/events", route: "/v1/usage/events", key: sk, status: 201, body: usageBatch},
		{method: "POST", path: "/v1/usage/events", route: "/v1/usage/events", key: sk, status: 200, body: usageBatch},
		{method: "POST", path: "/v1/usage/events", route: "/v1/usage/events", key: sk, status: 409, body: changed},
		{method: "POST", path: "/v1/usage/events", route: "/v1/usage/events", key: sk, status: 400, body: []byte(`{"mode":"sometimes"`)},
		{method: "GET", path: "/v1/usage/events?account_id=cust-1&limit=5", route: "/v1/usage/events", key: sk, status: 200},
		{method: "GET", path: "/v1/usage/events?from=yesterday", route: "/v1/usage/events", key: sk, status: 400},
		{method: "GET", path: "/v1/usage/summary?resolution=day&product=api", route: "/v1/usage/summary", key: sk, status: 200},
		{method: "GET", path: "/v1/usage/summary", route: "/v1/usage/summary", key: sk, status: 400},

		{method: "GET", path: "/v1/webhook_endpoint", route: "/v1/webhook_endpoint", key: sk, status: 404},
		{method: "PUT", path: "/v1/webhook_endpoint", route: "/v1/webhook_endpoint", key: sk, status: 400, body: map[string]any{"url": "http://x"}},
		{method: "PUT", path: "/v1/webhook_endpoint", route: "/v1/webhook_endpoint", key: sk, status: 200, body: map[string]any{"url": hookURL}},
		{method: "PUT", path: "/v1/webhook_endpoint", route: "/v1/webhook_endpoint", key: sk, status: 200,
			body: map[string]any{"url": hookURL, "method": "GET", "enabled": false}},
		{method: "GET", path: "/v1/webhook_endpoint", route: "/v1/webhook_endpoint", key: sk, status: 200},
		{method: "GET", path: "/v1/webhook_endpoint/secret", route: "/v1/webhook_endpoint/secret", key: sk, status: 200},
		{method: "POST", path: "/v1/webhook_endpoint/rotate_secret", route: "/v1/webhook_endpoint/rotate_secret", key: sk, status: 200},
		{method: "GET", path: "/v1/webhook_endpoint/secret", route: "/v1/webhook_endpoint/secret", key: sk, status: 200},
		{method: "POST", path: "/v1/webhook_endpoint/test", route: "/v1/webhook_endpoint/test", key: sk, status: 200, body: map[string]any{"type": "deal-signed"}},
		{method: "POST", path: "/v1/webhook_endpoint/test", route: "/v1/webhook_endpoint/test", key: sk, status: 400, body: map[string]any{"type": "nope"}},
		{method: "POST", path: "/v1/webhook_endpoints", route: "/v1/webhook_endpoints", key: sk, status: 201, save: "endpoint", body: map[string]any{
			"url": hookURL, "description": "CRM", "event_types": []any{"account-created", "endpoint-disabled"},
			"retry_policy": map[string]any{"initial_interval": "1m", "backoff_coefficient": 2, "maximum_interval": "1h", "maximum_attempts": 8}}},
		{method: "POST", path: "/v1/webhook_endpoints", route: "/v1/webhook_endpoints", key: sk, status: 201, save: "endpoint2", body: map[string]any{"url": hookURL}},
		{method: "POST", path: "/v1/webhook_endpoints", route: "/v1/webhook_endpoints", key: sk, status: 400,
			body: map[string]any{"url": hookURL, "event_types": []any{"nope"}, "retry_policy": map[string]any{"maximum_attempts": 50}}},
		{method: "GET", path: "/v1/webhook_endpoints?limit=1", route: "/v1/webhook_endpoints", key: sk, status: 200},
		{method: "GET", path: "/v1/webhook_endpoints?limit=0", route: "/v1/webhook_endpoints", key: sk, status: 400},
		{method: "GET", path: "/v1/webhook_endpoints/{endpoint}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200},
		{method: "PATCH", path: "/v1/webhook_endpoints/{endpoint}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200, body: map[string]any{"enabled": false}},
		{method: "PATCH", path: "/v1/webhook_endpoints/{endpoint}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200,
			body: map[string]any{"enabled": true, "description": "CRM sync", "retry_policy": map[string]any{"maximum_attempts": 3}}},
		{method: "PATCH", path: "/v1/webhook_endpoints/{endpoint}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 400,
			body: map[string]any{"retry_policy": map[string]any{"initial_interval": "soon"}}},
		{method: "PATCH", path: "/v1/webhook_endpoints/{endpoint2}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200,
			body: map[string]any{"filter": map[string]any{"event.type": map[string]any{"$exists": true}}}},
		{method: "POST", path: "/v1/webhook_endpoints/filter_test", route: "/v1/webhook_endpoints/filter_test", key: sk, status: 200,
			body: map[string]any{"filter": map[string]any{"deal.net_price": map[string]any{"$gte": "1000"}}, "payload": map[string]any{"deal": map[string]any{"net_price": "1200.00"}}}},
		{method: "POST", path: "/v1/webhook_endpoints/filter_test", route: "/v1/webhook_endpoints/filter_test", key: sk, status: 400,
			body: map[string]any{"filter": map[string]any{"deal.status": map[string]any{"$gt": true}}, "payload": map[string]any{}}},
		{method: "GET", path: "/v1/webhook_endpoints/00000000-0000-4000-8000-000000000000", route: "/v1/webhook_endpoints/{id}", key: sk, status: 404},
		{method: "GET", path: "/v1/webhook_endpoints/{endpoint}/secret", route: "/v1/webhook_endpoints/{id}/secret", key: sk, status: 200},
		{method: "POST", path: "/v1/webhook_endpoints/{endpoint}/rotate_secret", route: "/v1/webhook_endpoints/{id}/rotate_secret", key: sk, status: 200},
		{method: "GET", path: "/v1/webhook_endpoints/{endpoint}/secret", route: "/v1/webhook_endpoints/{id}/secret", key: sk, status: 200},
		{method: "POST", path: "/v1/webhook_endpoints/{endpoint}/test", route: "/v1/webhook_endpoints/{id}/test", key: sk, status: 200, body: map[string]any{"type": "deal-signed"}},
		{method: "POST", path: "/v1/webhook_endpoints/{endpoint}/test", route: "/v1/webhook_endpoints/{id}/test", key: sk, status: 400, body: map[string]any{"type": "nope"}},
		// An ed25519 endpoint (CONTRACT §25): public_key on the object and the rotation, no secret to read.
		{method: "POST", path: "/v1/webhook_endpoints", route: "/v1/webhook_endpoints", key: sk, status: 201, save: "edendpoint", body: map[string]any{"url": hookURL, "signing": "ed25519"}},
		{method: "GET", path: "/v1/webhook_endpoints/{edendpoint}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200},
		{method: "GET", path: "/v1/webhook_endpoints/{edendpoint}/secret", route: "/v1/webhook_endpoints/{id}/secret", key: sk, status: 404},
		{method: "POST", path: "/v1/webhook_endpoints/{edendpoint}/rotate_secret", route: "/v1/webhook_endpoints/{id}/rotate_secret", key: sk, status: 200},
		{method: "PATCH", path: "/v1/webhook_endpoints/{edendpoint}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200, body: map[string]any{"signing": "hmac-sha256"}},
		{method: "DELETE", path: "/v1/webhook_endpoints/{edendpoint}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200},
		{method: "GET", path: "/v1/webhook_endpoints/{endpoint}/stats?window=hour&from=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z",
			route: "/v1/webhook_endpoints/{id}/stats", key: sk, status: 200, before: endpointStatRollups},
		{method: "GET", path: "/v1/webhook_endpoints/{endpoint}/stats?window=week&from=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z",
			route: "/v1/webhook_endpoints/{id}/stats", key: sk, status: 400},
		{method: "GET", path: "/v1/webhook_endpoints/00000000-0000-4000-8000-000000000000/stats?window=day&from=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z",
			route: "/v1/webhook_endpoints/{id}/stats", key: sk, status: 404},
		{method: "DELETE", path: "/v1/webhook_endpoints/{endpoint2}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 200},
		{method: "DELETE", path: "/v1/webhook_endpoints/{endpoint2}", route: "/v1/webhook_endpoints/{id}", key: sk, status: 404},
		// The newest event, read by the events scenario, has a delivery to the endpoint.
		{method: "POST", path: "/v1/accounts", route: "/v1/accounts", key: sk, status: 201, body: map[string]any{"name": "Hooked"}},

		{method: "POST", path: "/v1/meters", route: "/v1/meters", key: sk, status: 201, body: map[string]any{
			"key": "api_calls", "description": "API calls by region", "filter": map[string]any{"metric_name": "calls", "product": "api"},
			"aggregation": "sum", "group_by": []any{"region"}}},
		{method: "POST", path: "/v1/meters", route: "/v1/meters", key: sk, status: 201, body: map[string]any{
			"key": "users", "filter": map[string]any{"metric_name": "calls"}, "aggregation": "unique_count", "value_key": "user"}},
		{method: "POST", path: "/v1/meters", route: "/v1/meters", key: sk, status: 409, body: map[string]any{
			"key": "users", "filter": map[string]any{"metric_name": "calls"}, "aggregation": "count"}},
		{method: "POST", path: "/v1/meters", route: "/v1/meters", key: sk, status: 400, body: map[string]any{
			"key": "Users", "filter": map[string]any{}, "aggregation": "count", "value_key": "user", "status": "ready"}},
		{method: "GET", path: "/v1/meters?limit=1", route: "/v1/meters", key: sk, status: 200},
		{method: "GET", path: "/v1/meters/api_calls", route: "/v1/meters/{key}", key: sk, status: 200},
		{method: "GET", path: "/v1/meters/nothing", route: "/v1/meters/{key}", key: sk, status: 404},
		{method: "PATCH", path: "/v1/meters/api_calls", route: "/v1/meters/{key}", key: sk, status: 200, body: map[string]any{"description": "Calls"}},
		{method: "PATCH", path: "/v1/meters/api_calls", route: "/v1/meters/{key}", key: sk, status: 400, body: map[string]any{"aggregation": "max"}},
		{method: "GET", path: "/v1/meters/api_calls/values?window=day&group_by=region&" + today, route: "/v1/meters/{key}/values", key: sk, status: 200,
			before: consumeUsage},
		{method: "GET", path: "/v1/meters/api_calls/values?window=day&limit=1&" + today, route: "/v1/meters/{key}/values", key: sk, status: 200},
		{method: "GET", path: "/v1/meters/api_calls/values?window=day&limit=0", route: "/v1/meters/{key}/values", key: sk, status: 400},
		{method: "GET", path: "/v1/meters/nothing/values?window=day&" + today, route: "/v1/meters/{key}/values", key: sk, status: 404},
		{method: "POST", path: "/v1/meters/api_calls/alerts", route: "/v1/meters/{key}/alerts", key: sk, status: 201, save: "alert", body: map[string]any{
			"threshold": "1000.5", "window": "month", "account_id": "cust-1", "group": map[string]any{"region": "eu"}, "description": "EU calls"}},
		{method: "POST", path: "/v1/meters/api_calls/alerts", route: "/v1/meters/{key}/alerts", key: sk, status: 201, save: "alert2",
			body: map[string]any{"threshold": 10, "window": "day"}},
		{method: "POST", path: "/v1/meters/api_calls/alerts", route: "/v1/meters/{key}/alerts", key: sk, status: 400,
			body: map[string]any{"threshold": 0, "window": "week", "group": map[string]any{"plan": "gold"}}},
		{method: "POST", path: "/v1/meters/nothing/alerts", route: "/v1/meters/{key}/alerts", key: sk, status: 404,
			body: map[string]any{"threshold": 1, "window": "day"}},
		{method: "GET", path: "/v1/meters/api_calls/alerts?limit=1", route: "/v1/meters/{key}/alerts", key: sk, status: 200},
		{method: "GET", path: "/v1/meters/api_calls/alerts?limit=0", route: "/v1/meters/{key}/alerts", key: sk, status: 400},
		{method: "GET", path: "/v1/meters/api_calls/alerts/{alert}", route: "/v1/meters/{key}/alerts/{id}", key: sk, status: 200},
		{method: "GET", path: "/v1/meters/users/alerts/{alert}", route: "/v1/meters/{key}/alerts/{id}", key: sk, status: 404},
		{method: "DELETE", path: "/v1/meters/api_calls/alerts/{alert2}", route: "/v1/meters/{key}/alerts/{id}", key: sk, status: 200},
		{method: "DELETE", path: "/v1/meters/api_calls/alerts/{alert2}", route: "/v1/meters/{key}/alerts/{id}", key: sk, status: 404},
		{method: "DELETE", path: "/v1/meters/users", route: "/v1/meters/{key}", key: sk, status: 200},
		{method: "DELETE", path: "/v1/meters/users", route: "/v1/meters/{key}", key: sk, status: 404},
		{method: "GET", path: "/v1/meters", route: "/v1/meters", key: pk, status: 403},

		{method: "GET", path: "/v1/event_types", route: "/v1/event_types", key: sk, status: 200},
		{method: "GET", path: "/v1/event_types?limit=%zz", route: "/v1/event_types", key: sk, status: 400},
		{method: "GET", path: "/v1/event_types", route: "/v1/event_types", key: pk, status: 403},
	}
}

// consumeUsage counts the usage waiting for the meters, as the worker's consumer does.
func consumeUsage(h *harness, _ map[string]string) {
	if _, err := meterstest.Consume(context.Background(), h.store); err != nil {
		h.t.Fatal(err)
	}
}

// TestResponsesMatchOpenAPI validates real responses of every documented resource
// against the document's schema for their route and status.
func TestResponsesMatchOpenAPI(t *testing.T) {
	s := loadSpec(t)
	rc := webhooktest.NewReceiver(t)
	f := &fakeDispatcher{}
	h := newHarness(t, trusting(t, rc), withFakeDispatcher(f))
	ids := map[string]string{}
	seen := map[string]bool{}
	for _, c := range append(openapiScenario(rc.URL+"/hooks"), eventsScenario(f)...) {
		r := runCall(t, h, c, ids)
		s.validate(t, c.route, c.method, r)
		if c.save != "" {
			ids[c.save] = savedID(t, r)
		}
		seen[c.method+" "+c.route] = true
	}
	// Every registered route was exercised at least once.
	for r := range registeredRoutes(t) {
		if !seen[r] {
			t.Errorf("the scenario does not call %s", r)
		}
	}
}

// runCall sends one call, its {name}s replaced by saved ids, and requires its status.
func runCall(t *testing.T, h *harness, c call, ids map[string]string) response {
	t.Helper()
	fill := func(v string) string {
		for k, id := range ids {
			v = strings.ReplaceAll(v, "{"+k+"}", id)
		}
		return v
	}
	if c.before != nil {
		c.before(h, ids)
	}
	body := c.body
	if m, ok := body.(map[string]any); ok {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		body = []byte(fill(string(b)))
	}
	key := h.key[c.key]
	if c.key == "bogus" {
		key = "sk_sandbox_" + strings.Repeat("x", 32)
	}
	r := h.do(c.method, fill(c.path), key, body, c.hdr...)
	if r.Status != c.status {
		t.Fatalf("%s %s: status %d, want %d: %.300s", c.method, c.path, r.Status, c.status, r.Body)
	}
	return r
}

// savedID is an answer's "id", or the first item's of a list.
func savedID(t *testing.T, r response) string {
	t.Helper()
	m := r.json(t)
	if data, ok := m["data"].([]any); ok && len(data) > 0 {
		m, _ = data[0].(map[string]any)
	}
	id, _ := m["id"].(string)
	return id
}

// TestRateLimitedMatchesOpenAPI: a 429 carries Retry-After and the error envelope.
func TestRateLimitedMatchesOpenAPI(t *testing.T) {
	s := loadSpec(t)
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.RateLimit = 1 })
	for i := 0; ; i++ {
		r := h.do("GET", "/v1/whoami", h.key["public live"], nil)
		if r.Status == http.StatusTooManyRequests {
			s.validate(t, "/v1/whoami", "GET", r)
			return
		}
		if i == 10 {
			t.Fatalf("no 429 after %d requests at 1 req/s", i)
		}
	}
}

// eventsScenario reads, filters and replays the events the other calls wrote (the
// dispatcher is the fake of events_replay_test.go). Run after openapiScenario.
func eventsScenario(f *fakeDispatcher) []call {
	const sk, unknown = "secret sandbox", "00000000-0000-4000-8000-000000000000"
	return []call{
		{method: "GET", path: "/v1/events?limit=2", route: "/v1/events", key: sk, status: 200, save: "event"},
		{method: "GET", path: "/v1/events?type=account-created&status=pending&object_id={account}&created_after=2020-01-01T00:00:00Z&created_before=4102444800",
			route: "/v1/events", key: sk, status: 200},
		{method: "GET", path: "/v1/events/{event}", route: "/v1/events/{id}", key: sk, status: 200},
		{method: "GET", path: "/v1/events/{event}", route: "/v1/events/{id}", key: sk, status: 200, before: dispatchedWithAttempts},
		{method: "GET", path: "/v1/events?limit=1", route: "/v1/events", key: sk, status: 200},
		{method: "GET", path: "/v1/events?status=lost&created_after=yesterday", route: "/v1/events", key: sk, status: 400},
		{method: "GET", path: "/v1/events/" + unknown, route: "/v1/events/{id}", key: sk, status: 404},
		{method: "GET", path: "/v1/events", route: "/v1/events", key: "public sandbox", status: 403},
		{method: "POST", path: "/v1/events/{event}/replay", route: "/v1/events/{id}/replay", key: sk, status: 202,
			before: func(h *harness, ids map[string]string) { // its delivery has ended
				if err := h.store.SetEventStatus(context.Background(), h.objEnv("sandbox"), ids["event"], models.EventDelivered); err != nil {
					h.t.Fatal(err)
				}
			}},
		{method: "POST", path: "/v1/events/{event}/replay", route: "/v1/events/{id}/replay", key: sk, status: 409,
			before: func(h *harness, ids map[string]string) { // its delivery is under way
				if err := h.store.SetEventStatus(context.Background(), h.objEnv("sandbox"), ids["event"], models.EventRetrying); err != nil {
					h.t.Fatal(err)
				}
			}},
		{method: "POST", path: "/v1/events/" + unknown + "/replay", route: "/v1/events/{id}/replay", key: sk, status: 404},
		{method: "POST", path: "/v1/events/replay", route: "/v1/events/replay", key: sk, status: 202, save: "job",
			body: map[string]any{"status": "pending", "created_after": 0, "created_before": "2100-01-01T00:00:00Z"}},
		{method: "GET", path: "/v1/events/replay/{job}", route: "/v1/events/replay/{id}", key: sk, status: 200, before: jobDone},
		{method: "POST", path: "/v1/events/replay", route: "/v1/events/replay", key: sk, status: 202,
			body: map[string]any{"type": "account-deleted", "status": "failed", "created_after": "1700000000", "created_before": nil}},
		{method: "POST", path: "/v1/events/replay", route: "/v1/events/replay", key: sk, status: 400, body: map[string]any{}},
		{method: "POST", path: "/v1/events/replay", route: "/v1/events/replay", key: sk, status: 400,
			body: map[string]any{"status": "failed", "created_before": "last week"}},
		{method: "POST", path: "/v1/events/replay", route: "/v1/events/replay", key: sk, status: 415, body: []byte(`{}`), hdr: []string{"Content-Type", "text/plain"}},
		{method: "GET", path: "/v1/events/replay/" + unknown, route: "/v1/events/replay/{id}", key: sk, status: 404},
	}
}

// dispatchedWithAttempts gives the saved event a run and two attempts (an answer, a
// timeout), the first one of its delivery, so that the non-null branches of the Event
// schema are checked too.
func dispatchedWithAttempts(h *harness, ids map[string]string) {
	ctx, env, id := context.Background(), h.objEnv("sandbox"), ids["event"]
	at := time.Now().Add(-time.Minute)
	ds, err := h.store.EventDeliveries(ctx, env, id)
	if err != nil || len(ds) == 0 {
		h.t.Fatalf("deliveries of %s: %v %v", id, ds, err)
	}
	for i, a := range []models.DeliveryAttempt{
		{EventID: id, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled, URL: "https://hooks.example/x", Method: "POST",
			StartedAt: at, DurationMS: 120, StatusCode: 500, ResponseExcerpt: "oops", Error: "status 500", Outcome: models.AttemptFailed},
		{EventID: id, RunID: "run-1", Number: 2, Trigger: models.TriggerScheduled, URL: "https://hooks.example/x", Method: "POST",
			StartedAt: at.Add(time.Second), DurationMS: 30000, Error: "timeout", Outcome: models.AttemptFailed},
	} {
		if i == 0 {
			a.DeliveryID, a.EndpointID = ds[0].ID, ds[0].EndpointID
		}
		if err := h.store.SeedAttempt(ctx, env, &a); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := h.store.MarkDispatched(ctx, env, id, "webhook-"+id, "run-1", time.Now()); err != nil {
		h.t.Fatal(err)
	}
	// Its delivery has ended, so that it can be replayed.
	if err := h.store.SetEventStatus(ctx, env, id, models.EventFailed); err != nil {
		h.t.Fatal(err)
	}
}

// endpointStatRollups gives the saved endpoint rollups of two hours, so that the stats
// answer's windows are checked too.
func endpointStatRollups(h *harness, ids map[string]string) {
	for i, hour := range []string{"2026-11-02T10:00:00Z", "2026-11-02T13:00:00Z"} {
		at, _ := time.Parse(time.RFC3339, hour)
		if err := h.rawDB().Exec(`INSERT INTO endpoint_stat_rollups (environment_id, endpoint_id, hour_start, shard,
			attempts, succeeded, failed, timeouts, le_50ms, gt_30000ms) VALUES (?, ?, ?, ?, 3, 2, 1, 1, 2, 1)`,
			h.objEnv("sandbox").ID, ids["endpoint"], at, i).Error; err != nil {
			h.t.Fatal(err)
		}
	}
}

// jobDone waits for the saved bulk replay to finish, so that its finished_at is checked
// and no job outlives the test's database.
func jobDone(h *harness, ids map[string]string) {
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r := h.do("GET", "/v1/events/replay/"+ids["job"], h.key["secret sandbox"], nil)
		if r.Status == http.StatusOK && r.json(h.t)["status"] == "done" {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("replay job not done: %d %s", r.Status, r.Body)
		}
	}
}

// TestReplayWithoutDispatcherMatchesOpenAPI: a process without a dispatcher still
// decides replays in the database and answers 202 (the sweeper reaches the workflows).
func TestReplayWithoutDispatcherMatchesOpenAPI(t *testing.T) {
	s := loadSpec(t)
	h := newHarness(t)
	_, _ = eventsFixture(h)
	failed, _ := listIDs(h, "status=failed")
	for _, c := range []call{
		{method: "POST", path: "/v1/events/" + failed[0] + "/replay", route: "/v1/events/{id}/replay", status: 202},
		{method: "POST", path: "/v1/events/replay", route: "/v1/events/replay", body: map[string]any{"status": "failed"}, status: 202},
		{method: "GET", path: "/v1/events/replay/00000000-0000-4000-8000-000000000000", route: "/v1/events/replay/{id}", status: 404},
	} {
		r := h.do(c.method, c.path, h.key["secret sandbox"], c.body)
		if r.Status != c.status {
			t.Fatalf("%s %s: %d, want %d", c.method, c.path, r.Status, c.status)
		}
		s.validate(t, c.route, c.method, r)
	}
}

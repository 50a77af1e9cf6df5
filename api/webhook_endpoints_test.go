package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/models"
)

// Every rule of CONTRACT §13 on an endpoint body is a 400 naming its field, and
// nothing is written.
func TestWebhookEndpointsValidation(t *testing.T) {
	h, rc := newReceiving(t)
	url := rc.URL + "/x"
	long := strings.Repeat("é", 256)
	rp := func(kv ...any) map[string]any {
		m := map[string]any{"url": url}
		p := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i].(string)] = kv[i+1]
		}
		m["retry_policy"] = p
		return m
	}
	tests := []struct {
		name        string
		body        any
		code, param string
	}{
		{"url missing", map[string]any{"method": "POST"}, "parameter_missing", "url"},
		{"plain http", map[string]any{"url": "http://hooks.example.com/x"}, "parameter_invalid", "url"},
		{"unresolvable host", map[string]any{"url": "https://nowhere.invalid/x"}, "url_not_allowed", "url"},
		{"method", map[string]any{"url": url, "method": "PUT"}, "parameter_invalid", "method"},
		{"description too long", map[string]any{"url": url, "description": long}, "parameter_invalid", "description"},
		{"no event type", map[string]any{"url": url, "event_types": []any{}}, "parameter_invalid", "event_types"},
		{"unknown event type", map[string]any{"url": url, "event_types": []any{"deal-signed", "deal-exploded"}}, "invalid_event_type", "event_types[1]"},
		{"event type twice", map[string]any{"url": url, "event_types": []any{"deal-signed", "deal-signed"}}, "parameter_invalid", "event_types[1]"},
		{"event types not a list", map[string]any{"url": url, "event_types": "deal-signed"}, "parameter_invalid", "event_types"},
		{"interval text", rp("initial_interval", "soon"), "parameter_invalid", "retry_policy.initial_interval"},
		{"interval too short", rp("initial_interval", "500ms"), "parameter_invalid", "retry_policy.initial_interval"},
		{"interval too long", rp("maximum_interval", "25h"), "parameter_invalid", "retry_policy.maximum_interval"},
		{"interval a number", rp("maximum_interval", 60), "parameter_invalid", "retry_policy.maximum_interval"},
		{"coefficient below 1", rp("backoff_coefficient", 0.5), "parameter_invalid", "retry_policy.backoff_coefficient"},
		{"coefficient above 10", rp("backoff_coefficient", 10.5), "parameter_invalid", "retry_policy.backoff_coefficient"},
		{"no attempt", rp("maximum_attempts", 0), "parameter_invalid", "retry_policy.maximum_attempts"},
		{"too many attempts", rp("maximum_attempts", 21), "parameter_invalid", "retry_policy.maximum_attempts"},
		{"fractional attempts", rp("maximum_attempts", 2.5), "parameter_invalid", "retry_policy.maximum_attempts"},
		{"maximum below initial", rp("initial_interval", "2h", "maximum_interval", "1h"), "parameter_invalid", "retry_policy.maximum_interval"},
		{"schedule past 7 days", rp("initial_interval", "24h", "maximum_interval", "24h", "maximum_attempts", 9), "parameter_invalid", "retry_policy.maximum_attempts"},
		{"backoff past 7 days", rp("initial_interval", "1h", "backoff_coefficient", 10, "maximum_interval", "24h", "maximum_attempts", 20), "parameter_invalid", "retry_policy.maximum_attempts"},
		{"unknown policy field", rp("jitter", true), "unknown_parameter", "retry_policy.jitter"},
		{"read-only status", map[string]any{"url": url, "status": "enabled"}, "parameter_read_only", "status"},
		{"enabled text", map[string]any{"url": url, "enabled": "yes"}, "parameter_invalid", "enabled"},
		{"description a number", map[string]any{"url": url, "description": 5}, "parameter_invalid", "description"},
		{"description with NUL", map[string]any{"url": url, "description": "a\x00b"}, "invalid_string", "description"},
		{"event type with a newline", map[string]any{"url": url, "event_types": []any{"deal-signed\n"}}, "invalid_string", "event_types[0]"},
		{"interval with a control", rp("initial_interval", "1h\u0085"), "invalid_string", "retry_policy.initial_interval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/webhook_endpoints", h.key[skSandbox], tc.body)
			expectError(t, r, http.StatusBadRequest, tc.code)
			if p := r.json(t)["error"].(map[string]any)["param"]; p != tc.param {
				t.Errorf("param %v, want %s (%s)", p, tc.param, r.Body)
			}
		})
	}
	if got := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints", nil)["data"].([]any); len(got) != 0 {
		t.Fatalf("refused bodies wrote endpoints: %v", got)
	}
	// The bounds themselves are allowed: 7 retries a day apart is exactly 7 days.
	h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", rp("initial_interval", "24h", "maximum_interval", "24h", "maximum_attempts", 8))
	h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", rp("initial_interval", "1s", "backoff_coefficient", 10, "maximum_interval", "1s", "maximum_attempts", 20))
	// PATCH checks the same rules, against the endpoint's own policy.
	id := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints?limit=1", nil)["data"].([]any)[0].(map[string]any)["id"].(string)
	r := h.do("PATCH", "/v1/webhook_endpoints/"+id, h.key[skSandbox], map[string]any{"retry_policy": map[string]any{"maximum_interval": "25h"}})
	expectError(t, r, http.StatusBadRequest, "parameter_invalid")
	r = h.do("PATCH", "/v1/webhook_endpoints/"+id, h.key[skSandbox], map[string]any{"url": "", "event_types": []any{"*", "bogus"}})
	if e := r.json(t)["error"].(map[string]any); r.Status != 400 || !strings.Contains(fmt.Sprint(e), "url") {
		t.Fatalf("PATCH with two faults: %d %s", r.Status, r.Body)
	}
}

// The §13 object, defaults, PATCH, secret, rotation, test, delete, the 16-endpoint limit,
// and the §8 singular routes acting on the oldest endpoint.
func TestWebhookEndpointsLifecycle(t *testing.T) {
	h, rc := newReceiving(t)
	sk := h.key[skSandbox]

	// The singular PUT creates the first (oldest) endpoint.
	first := h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": rc.URL + "/first"})
	if first.Status != 200 {
		t.Fatalf("PUT: %d %s", first.Status, first.Body)
	}
	created := h.do("POST", "/v1/webhook_endpoints", sk, map[string]any{"url": rc.URL + "/second"}, "Idempotency-Key", "create-1")
	ep := created.json(t)
	if created.Status != 201 {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	keys := make([]string, 0, len(ep))
	for k := range ep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "created_at,description,disabled_reason,enabled,event_types,filter,headers,health,id,method,object,ordering,public_key,rate_limit,retry_policy,secret,signing,status,updated_at,url,warnings" {
		t.Fatalf("object members %v", keys)
	}
	wantPolicy := map[string]any{"initial_interval": "1h", "backoff_coefficient": 1.0, "maximum_interval": "1h", "maximum_attempts": 6.0}
	if ep["object"] != "webhook_endpoint" || ep["method"] != "POST" || ep["description"] != nil || fmt.Sprint(ep["event_types"]) != "[*]" ||
		ep["enabled"] != true || ep["status"] != "enabled" || ep["ordering"] != "none" || ep["disabled_reason"] != nil || fmt.Sprint(ep["retry_policy"]) != fmt.Sprint(wantPolicy) ||
		!strings.HasPrefix(ep["secret"].(string), "whsec_") {
		t.Fatalf("created %v", ep)
	}
	// A new endpoint is idle, with no success rate yet (CONTRACT §23).
	if fmt.Sprint(ep["health"]) != fmt.Sprint(map[string]any{"status": "idle", "success_rate_24h": nil, "last_success_at": nil, "failing_since": nil}) {
		t.Fatalf("health of a new endpoint %v", ep["health"])
	}
	id, secret := ep["id"].(string), ep["secret"].(string)
	// A keyed retry answers the same endpoint, secret included, and creates nothing.
	again := h.do("POST", "/v1/webhook_endpoints", sk, map[string]any{"url": rc.URL + "/second"}, "Idempotency-Key", "create-1")
	if again.Status != 201 || again.json(t)["id"] != id || again.json(t)["secret"] != secret || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("keyed retry: %d %s", again.Status, again.Body)
	}

	list := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints", nil)["data"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["id"] != id || list[0].(map[string]any)["secret"] != nil {
		t.Fatalf("list %v, want 2, newest first, no secrets", list)
	}
	if got := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+id+"/secret", nil); got["secret"] != secret {
		t.Fatalf("secret %v", got)
	}

	off := h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"enabled": false, "description": "CRM",
		"event_types": []any{"account-created", "endpoint-disabled"}, "retry_policy": map[string]any{"initial_interval": "90s", "backoff_coefficient": 2, "maximum_interval": "2h30m"}})
	if off["enabled"] != false || off["status"] != "disabled" || off["health"].(map[string]any)["status"] != "disabled" || off["disabled_reason"] != "manual" || off["description"] != "CRM" ||
		fmt.Sprint(off["event_types"]) != "[account-created endpoint-disabled]" ||
		fmt.Sprint(off["retry_policy"]) != fmt.Sprint(map[string]any{"initial_interval": "1m30s", "backoff_coefficient": 2.0, "maximum_interval": "2h30m", "maximum_attempts": 6.0}) {
		t.Fatalf("patched %v", off)
	}
	on := h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"enabled": true})
	if on["status"] != "enabled" || on["disabled_reason"] != nil || on["description"] != "CRM" {
		t.Fatalf("re-enabled %v", on)
	}
	if cleared := h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"description": nil}); cleared["description"] != nil {
		t.Fatalf("description null did not clear it: %v", cleared)
	}

	rot := h.mustObj(http.StatusOK, "POST", "/v1/webhook_endpoints/"+id+"/rotate_secret", nil)
	if rot["secret"] == secret || rot["previous_secret_expires_at"] == nil {
		t.Fatalf("rotated %v", rot)
	}
	test := h.mustObj(http.StatusOK, "POST", "/v1/webhook_endpoints/"+id+"/test", map[string]any{"type": "deal-signed"})
	got := rc.Received()
	if test["ok"] != true || len(got) != 1 || !validSignature(rot["secret"].(string), got[0].Header, got[0].Body) {
		t.Fatalf("test %v, received %d", test, len(got))
	}

	// The singular routes still act on the oldest endpoint and keep what PUT does not set.
	if s := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoint", nil); s["url"] != rc.URL+"/first" {
		t.Fatalf("singular GET %v", s)
	}
	oldest := list[1].(map[string]any)["id"].(string)
	h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+oldest, map[string]any{"event_types": []any{"deal-signed"}})
	put := h.mustObj(http.StatusOK, "PUT", "/v1/webhook_endpoint", map[string]any{"url": rc.URL + "/uno", "method": "GET"})
	if put["secret"] != nil || put["url"] != rc.URL+"/uno" {
		t.Fatalf("second PUT %v", put)
	}
	if o := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+oldest, nil); o["method"] != "GET" || fmt.Sprint(o["event_types"]) != "[deal-signed]" {
		t.Fatalf("oldest after PUT %v", o)
	}
	if o := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+id, nil); o["url"] != rc.URL+"/second" {
		t.Fatalf("the newer endpoint changed with PUT: %v", o)
	}

	// Up to 16.
	for i := 2; i < 16; i++ {
		h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": fmt.Sprintf("%s/n%d", rc.URL, i)})
	}
	expectError(t, h.do("POST", "/v1/webhook_endpoints", sk, map[string]any{"url": rc.URL + "/n17"}), http.StatusBadRequest, "too_many_endpoints")

	del := h.mustObj(http.StatusOK, "DELETE", "/v1/webhook_endpoints/"+id, nil)
	if del["id"] != id || del["deleted"] != true || del["object"] != "webhook_endpoint" {
		t.Fatalf("delete %v", del)
	}
	for _, p := range []string{"", "/secret"} {
		expectError(t, h.do("GET", "/v1/webhook_endpoints/"+id+p, sk, nil), http.StatusNotFound, "resource_missing")
	}
	expectError(t, h.do("DELETE", "/v1/webhook_endpoints/"+id, sk, nil), http.StatusNotFound, "resource_missing")
	expectError(t, h.do("GET", "/v1/webhook_endpoints/"+oldest, h.key["secret live"], nil), http.StatusNotFound, "resource_missing")
	// The deleted endpoint holds its place until its deletion's job has ended its
	// deliveries (CONTRACT §21; no worker here: the test runs the job's store calls).
	expectError(t, h.do("POST", "/v1/webhook_endpoints", sk, map[string]any{"url": rc.URL + "/again"}), http.StatusBadRequest, "too_many_endpoints")
	env := h.objEnv("sandbox")
	if _, err := webhook.SkipDeletedEndpointPage(context.Background(), h.store.OnJobsPool(), env.ID, id, webhook.DeletionRows); err != nil {
		t.Fatal(err)
	}
	if err := h.store.OnJobsPool().EndEndpointDeletion(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/again"})
}

// GET /v1/events/{id} lists the event's deliveries, one per subscribed endpoint, each
// with its attempts; every attempt names its endpoint.
func TestEventShowsDeliveries(t *testing.T) {
	h := newHarness(t)
	ctx, env := context.Background(), h.objEnv("sandbox")
	mk := func(types []string) models.WebhookEndpoint {
		ep, err := webhook.CreateEndpoint(ctx, h.store, env, models.WebhookEndpoint{URL: "https://hooks.example/x", Method: "POST",
			EventTypes: types, Enabled: true, Secret: "whsec_x"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	crm, billing := mk([]string{"account-created"}), mk([]string{"deal-signed"})
	a := h.newObjAccount("Alpha")
	ev := h.objEvents(a)[0]
	ds, _ := h.store.EventDeliveries(ctx, env, ev.ID)
	att := models.DeliveryAttempt{EventID: ev.ID, DeliveryID: ds[0].ID, RunID: "r1", Number: 1, Trigger: models.TriggerScheduled,
		StartedAt: time.Now().UTC(), StatusCode: 200, Outcome: models.AttemptSucceeded}
	if err := webhooktest.RecordAttempt(ctx, h.store, env, &att, models.EventDelivered); err != nil {
		t.Fatal(err)
	}
	o := h.mustObj(http.StatusOK, "GET", "/v1/events/"+ev.ID, nil)
	deliveries := o["deliveries"].([]any)
	if o["status"] != "delivered" || len(deliveries) != 1 {
		t.Fatalf("event %v", o)
	}
	d := deliveries[0].(map[string]any)
	atts := d["attempts"].([]any)
	if d["id"] != ds[0].ID || d["endpoint_id"] != crm.ID || d["status"] != "delivered" || len(atts) != 1 ||
		atts[0].(map[string]any)["endpoint_id"] != crm.ID || o["attempts"].([]any)[0].(map[string]any)["endpoint_id"] != crm.ID {
		t.Fatalf("delivery %v (billing %s must have none)", d, billing.ID)
	}
}

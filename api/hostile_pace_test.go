package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
)

// paceHostileCases are hostile rate_limit members (CONTRACT §27, §15) on the plural
// endpoint routes: each is a 400 on the member at fault, never a 5xx, and writes nothing.
func paceHostileCases(s hostileSeed) []hostileCase {
	var cs []hostileCase
	routes := []struct{ method, path, base string }{
		{"POST", "/v1/webhook_endpoints", `"url":"https://127.0.0.1:9/hook",`},
		{"PATCH", "/v1/webhook_endpoints/" + s.endpoint, ""},
	}
	for _, r := range routes {
		for _, c := range []struct {
			name, rl, code, param string
		}{
			{"limit 0", `{"limit":0,"period":"1s"}`, "parameter_invalid", "rate_limit.limit"},
			{"limit 1001", `{"limit":1001,"period":"1s"}`, "parameter_invalid", "rate_limit.limit"},
			{"limit negative", `{"limit":-5,"period":"1m"}`, "parameter_invalid", "rate_limit.limit"},
			{"limit fraction", `{"limit":2.5,"period":"1s"}`, "parameter_invalid", "rate_limit.limit"},
			{"limit huge", `{"limit":1e999,"period":"1s"}`, "parameter_invalid", "rate_limit.limit"},
			{"limit string", `{"limit":"5","period":"1s"}`, "parameter_invalid", "rate_limit.limit"},
			{"limit object", `{"limit":{"a":[1]},"period":"1s"}`, "parameter_invalid", "rate_limit.limit"},
			{"period 1h", `{"limit":5,"period":"1h"}`, "parameter_invalid", "rate_limit.period"},
			{"period NUL", `{"limit":5,"period":"1s\u0000"}`, "invalid_string", "rate_limit.period"},
			{"period invalid UTF-8", "{\"limit\":5,\"period\":\"\xff\"}", "invalid_string", "rate_limit.period"},
			{"period number", `{"limit":5,"period":1}`, "parameter_invalid", "rate_limit.period"},
			{"no period", `{"limit":5}`, "parameter_missing", "rate_limit.period"},
			{"no limit", `{"period":"1s"}`, "parameter_missing", "rate_limit.limit"},
			{"unknown member", `{"limit":5,"period":"1s","burst":10}`, "unknown_parameter", "rate_limit.burst"},
			{"number", `5`, "parameter_invalid", "rate_limit"},
			{"string", `"5/1s"`, "parameter_invalid", "rate_limit"},
			{"array", `[5,"1s"]`, "parameter_invalid", "rate_limit"},
			{"past the environment's cap", `{"limit":1000,"period":"1s"}`, "rate_limit_too_high", "rate_limit"},
		} {
			cs = append(cs, hostileCase{name: fmt.Sprintf("%s %s rate_limit %s", r.method, r.path, c.name), method: r.method, path: r.path,
				body: []byte(`{` + r.base + `"rate_limit":` + c.rl + `}`), status: 400, code: c.code, param: c.param})
		}
	}
	return cs
}

// TestPacedEndpointObject (CONTRACT §27): rate_limit is on the endpoint object, null by
// default, set by a create and a PATCH, and null again after a PATCH of null.
func TestPacedEndpointObject(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true })
	sk := h.key[skSandbox]
	ep := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": "https://127.0.0.1:9/hook"})
	if v, ok := ep["rate_limit"]; !ok || v != nil {
		t.Fatalf("a new endpoint's rate_limit: %v (present %v)", v, ok)
	}
	id := ep["id"].(string)
	paced := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": "https://127.0.0.1:9/paced",
		"rate_limit": map[string]any{"limit": 5, "period": "1s"}})
	if fmt.Sprint(paced["rate_limit"]) != "map[limit:5 period:1s]" {
		t.Fatalf("created paced: %v", paced["rate_limit"])
	}
	got := h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"rate_limit": map[string]any{"limit": 90, "period": "1m"}})
	if fmt.Sprint(got["rate_limit"]) != "map[limit:90 period:1m]" {
		t.Fatalf("patched: %v", got["rate_limit"])
	}
	got = h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+id, nil)
	if fmt.Sprint(got["rate_limit"]) != "map[limit:90 period:1m]" {
		t.Fatalf("read back: %v", got["rate_limit"])
	}
	// 1.5/s of the default 100/s is taken by the others: 99/s is past the room.
	r := h.do("PATCH", "/v1/webhook_endpoints/"+paced["id"].(string), sk, map[string]any{"rate_limit": map[string]any{"limit": 99, "period": "1s"}})
	if r.Status != 400 || !strings.Contains(string(r.Body), `"code":"rate_limit_too_high"`) || !strings.Contains(string(r.Body), "leaves 98.5 per second") {
		t.Fatalf("past the cap: %d %s", r.Status, r.Body)
	}
	got = h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"rate_limit": nil})
	if v, ok := got["rate_limit"]; !ok || v != nil {
		t.Fatalf("unpaced: %v", v)
	}
	got = h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"description": "x"})
	if v := got["rate_limit"]; v != nil {
		t.Fatalf("a PATCH without rate_limit paced it: %v", v)
	}
}

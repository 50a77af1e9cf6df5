package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Every bad request answers with the right status and code and writes nothing.
func TestUsageRejectsBadInputAndWritesNothing(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	ok := metricJSON("a", "m", "1", "day")
	many := strings.TrimSuffix(strings.Repeat(ok+",", 1001), ",")
	long := strings.Repeat("x", 256)
	tests := []struct {
		name   string
		key    string
		body   []byte
		hdr    []string
		status int
		code   string
		param  string
	}{
		{"malformed JSON", sk, []byte(`{"transaction_id":"t",`), nil, 400, "invalid_json", ""},
		{"no body", sk, nil, nil, 400, "invalid_json", ""},
		{"string value", sk, usageBody("t", "increment", ok, metricJSON("a", "m", `"5"`, "day")), nil, 400, "parameter_invalid", "event_metrics[1].metric_value"},
		{"array metadata", sk, usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":[]`)), nil, 400, "parameter_invalid", "event_metrics[0].metadata"},
		{"NaN", sk, usageBody("t", "increment", metricJSON("a", "m", "NaN", "day")), nil, 400, "invalid_json", ""},
		{"1e400", sk, usageBody("t", "increment", metricJSON("a", "m", "1e400", "day")), nil, 400, "parameter_invalid", "event_metrics[0].metric_value"},
		{"empty metrics", sk, usageBody("t", "increment"), nil, 400, "parameter_invalid", "event_metrics"},
		{"1001 metrics", sk, usageBody("t", "increment", many), nil, 400, "parameter_invalid", "event_metrics"},
		{"256-char transaction id", sk, usageBody(long, "increment", ok), nil, 400, "parameter_invalid", "transaction_id"},
		{"256-char account id", sk, usageBody("t", "increment", metricJSON(long, "m", "1", "day")), nil, 400, "parameter_invalid", "event_metrics[0].account_id"},
		{"unknown field", sk, usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"unit":"ms"`)), nil, 400, "unknown_parameter", "event_metrics[0].unit"},
		{"bad resolution", sk, usageBody("t", "increment", ok, ok, ok, metricJSON("a", "m", "1", "year")), nil, 400, "parameter_invalid", "event_metrics[3].metric_resolution"},
		{"negative in set", sk, usageBody("t", "set", metricJSON("a", "m", "-1", "day")), nil, 400, "parameter_invalid", "event_metrics[0].metric_value"},
		{"old timestamp", sk, usageBody("t", "increment", metricJSON("a", "m", "1", "day", fmt.Sprintf(`"timestamp":%d`, time.Now().Add(-36*24*time.Hour).Unix()))), nil, 400, "parameter_invalid", "event_metrics[0].timestamp"},
		{"future timestamp", sk, usageBody("t", "increment", metricJSON("a", "m", "1", "day", fmt.Sprintf(`"timestamp":%q`, time.Now().Add(10*time.Minute).Format(time.RFC3339)))), nil, 400, "parameter_invalid", "event_metrics[0].timestamp"},
		{"wrong content type", sk, usageBody("t", "increment", ok), []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type", ""},
		{"over 1 MiB", sk, usageBody("t", "increment", metricJSON("a", "m", "1", "day", `"metadata":{"k":"`+strings.Repeat("x", 1<<20)+`"}`)), nil, 413, "request_too_large", ""},
		{"public key", h.key["public sandbox"], usageBody("t", "increment", ok), nil, 403, "secret_key_required", ""},
		{"no key", "", usageBody("t", "increment", ok), nil, 401, "missing_api_key", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != nil {
				body = tt.body
			}
			r := h.do("POST", "/v1/usage/events", tt.key, body, tt.hdr...)
			expectError(t, r, tt.status, tt.code)
			e := r.json(t)["error"].(map[string]any)
			if tt.param != "" && e["param"] != tt.param {
				t.Errorf("param %v, want %s: %s", e["param"], tt.param, r.Body)
			}
			if got := h.usageCounts("sandbox"); got != [3]int64{} {
				t.Fatalf("written: %v", got)
			}
		})
	}
}

package api_test

import (
	"fmt"
	"strings"
)

// headerHostileCases are hostile headers members (CONTRACT §25, §15) on the plural
// endpoint routes: each is a 400 on headers.<name> (or headers), never a 5xx, and writes
// nothing.
func headerHostileCases(s hostileSeed) []hostileCase {
	var cs []hostileCase
	routes := []struct{ method, path, base string }{
		{"POST", "/v1/webhook_endpoints", `"url":"https://127.0.0.1:9/hook",`},
		{"PATCH", "/v1/webhook_endpoints/" + s.endpoint, ""},
	}
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf(`"X-H%d":"v"`, i)
	}
	long := strings.Repeat("n", 10_000)
	for _, r := range routes {
		for _, c := range []struct {
			name, headers, code, param string
		}{
			{"NUL value", `{"X-A":"a\u0000"}`, "invalid_string", "headers.X-A"},
			{"invalid UTF-8 value", "{\"X-A\":\"a\xff\"}", "invalid_string", "headers.X-A"},
			{"lone surrogate value", `{"X-A":"\ud800"}`, "invalid_string", "headers.X-A"},
			{"CR LF value", `{"X-A":"a\r\nHost: evil"}`, "invalid_string", "headers.X-A"},
			{"NUL name", `{"X\u0000A":"v"}`, "invalid_string", "headers.X\x00A"},
			{"4097-byte value", `{"X-A":"` + strings.Repeat("v", 4097) + `"}`, "parameter_invalid", "headers.X-A"},
			{"10,000-character name", `{"` + long + `":"v"}`, "parameter_invalid", "headers." + long},
			{"1000 headers", "{" + strings.Join(many, ",") + "}", "parameter_invalid", "headers"},
			{"refused name", `{"Transfer-Encoding":"chunked"}`, "parameter_invalid", "headers.Transfer-Encoding"},
			{"placeholder", `{"X-A":"<redacted>"}`, "parameter_invalid", "headers.X-A"},
			{"object value", `{"X-A":{"a":{"b":1}}}`, "parameter_invalid", "headers.X-A"},
			{"number value", `{"X-A":1e999}`, "parameter_invalid", "headers.X-A"},
			{"array", `["X-A"]`, "parameter_invalid", "headers"},
			{"string", `"X-A: v"`, "parameter_invalid", "headers"},
		} {
			cs = append(cs, hostileCase{name: fmt.Sprintf("%s %s headers %s", r.method, r.path, c.name), method: r.method, path: r.path,
				body: []byte(`{` + r.base + `"headers":` + c.headers + `}`), status: 400, code: c.code, param: c.param})
		}
	}
	return cs
}

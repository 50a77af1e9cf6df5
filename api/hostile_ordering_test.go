package api_test

import "fmt"

// orderingHostileCases are hostile ordering members (CONTRACT §26, §15) on the plural
// endpoint routes: each is a 400 on ordering, never a 5xx, and writes nothing.
func orderingHostileCases(s hostileSeed) []hostileCase {
	var cs []hostileCase
	routes := []struct{ method, path, base string }{
		{"POST", "/v1/webhook_endpoints", `"url":"https://127.0.0.1:9/ordered",`},
		{"PATCH", "/v1/webhook_endpoints/" + s.endpoint, ""},
	}
	for _, r := range routes {
		for _, c := range []struct{ name, value, code string }{
			{"unknown value", `"lane"`, "parameter_invalid"},
			{"upper case", `"OBJECT"`, "parameter_invalid"},
			{"empty", `""`, "parameter_invalid"},
			{"padded", `" object"`, "parameter_invalid"},
			{"NUL", `"object\u0000"`, "invalid_string"},
			{"invalid UTF-8", "\"object\xff\"", "invalid_string"},
			{"newline", `"object\n"`, "invalid_string"},
			{"boolean", `true`, "parameter_invalid"},
			{"number", `1`, "parameter_invalid"},
			{"huge number", `1e999`, "parameter_invalid"},
			{"array", `["object"]`, "parameter_invalid"},
			{"object", `{"by":"object"}`, "parameter_invalid"},
		} {
			cs = append(cs, hostileCase{name: fmt.Sprintf("%s %s ordering %s", r.method, r.path, c.name), method: r.method, path: r.path,
				body: []byte(`{` + r.base + `"ordering":` + c.value + `}`), status: 400, code: c.code, param: "ordering"})
		}
	}
	return cs
}

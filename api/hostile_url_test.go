package api_test

import (
	"fmt"
	"strings"
)

// urlHostileCases are endpoint URLs carrying user information (CONTRACT §13, §15, issue
// 41 finding 8) on every route that sets a URL: each is a 400 parameter_invalid on url,
// never a 5xx, and writes nothing — whatever the user information holds.
func urlHostileCases(s hostileSeed) []hostileCase {
	var cs []hostileCase
	routes := []struct{ method, path string }{
		{"POST", "/v1/webhook_endpoints"},
		{"PATCH", "/v1/webhook_endpoints/" + s.endpoint},
		{"PUT", "/v1/webhook_endpoint"},
	}
	for _, r := range routes {
		for _, c := range []struct{ name, url string }{
			{"user and password", "https://user:pass@127.0.0.1:9/hook"},
			{"user alone", "https://token@127.0.0.1:9/hook"},
			{"empty user information", "https://@127.0.0.1:9/hook"},
			{"empty user and password", "https://:@127.0.0.1:9/hook"},
			{"escaped NUL in the password", "https://u:p%00w@127.0.0.1:9/hook"},
			{"escaped controls in the user", "https://%0d%0aHost:%20evil@127.0.0.1:9/hook"},
			{"non-ASCII user", "https://j\u00f6rg:pw@127.0.0.1:9/hook"},
			{"bad escape in the password", "https://u:p%zz@127.0.0.1:9/hook"},
			{"1,900-byte password", "https://u:" + strings.Repeat("p", 1900) + "@127.0.0.1:9/hook"},
			{"two at signs", "https://a@b@127.0.0.1:9/hook"},
			{"credentials and a query", "https://u:p@127.0.0.1:9/hook?token=t"},
		} {
			cs = append(cs, hostileCase{name: fmt.Sprintf("%s %s url %s", r.method, r.path, c.name), method: r.method, path: r.path,
				body: []byte(fmt.Sprintf(`{"url":%q}`, c.url)), status: 400, code: "parameter_invalid", param: "url"})
		}
	}
	return cs
}

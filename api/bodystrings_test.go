package api

import (
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
)

// TestCheckStrings: every string of a body, member names included, is checked before
// decoding hides it, and named by the path of its member.
func TestCheckStrings(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"clean", `{"name":"Zürich \ud83c\udf89","n":1,"a":[true,null,{"b":"c"}]}`, ""},
		{"tab and newline are text", `{"d":"a\tb\nc"}`, ""},
		{"U+FFFD written raw", `{"d":"a` + "\uFFFD" + `"}`, ""},
		{"U+FFFD written escaped", `{"d":"a\uFFFD\ufffd"}`, ""},
		{"escaped backslash before u0000", `{"d":"\\u0000"}`, ""},
		{"NUL", `{"name":"a\u0000"}`, "name:invalid_string"},
		{"invalid byte", "{\"name\":\"a\xff\"}", "name:invalid_string"},
		{"overlong", "{\"a\":{\"b\":\"\xc0\x80\"}}", "a.b:invalid_string"},
		{"lone high surrogate", `{"a":"\ud800"}`, "a:invalid_string"},
		{"lone low surrogate", `{"a":"x\uDC00y"}`, "a:invalid_string"},
		{"surrogate beside a written U+FFFD", `{"a":"\ufffd\ud800"}`, "a:invalid_string"},
		{"array element", `{"skus":[{"code":"ok"},{"name":"n","code":"\u0000"}]}`, "skus[1].code:invalid_string"},
		{"array of strings", `{"a":["x","y","\u0000"]}`, "a[2]:invalid_string"},
		{"after a nested object", `{"a":{"b":{"c":1}},"d":"\u0000"}`, "d:invalid_string"},
		{"after a nested array", `{"a":[[1],[2,[3]]],"b":["\u0000"]}`, "b[0]:invalid_string"},
		{"member name", `{"properties":{"a\u0000":"x"}}`, "properties.a\x00:invalid_string"},
		{"top-level member name", "{\"\xff\":1}", "\uFFFD:invalid_string"},
		{"top-level string", `"\u0000"`, ":invalid_string"},
		{"every fault", `{"a":"\u0000","b":[{"c":"\ud800"}],"d":"ok"}`, "a:invalid_string b[0].c:invalid_string"},
		{"syntax error left to the decoder", `{"a":"\u0000"`, "a:invalid_string"},
		{"syntax error before", `{"a" "\u0000"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := apperr.Summary(checkStrings([]byte(c.body))); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	t.Run("faults are bounded", func(t *testing.T) {
		body := `[` + strings.Repeat(`"\u0000",`, 1000) + `1]`
		if n := len(strings.Fields(apperr.Summary(checkStrings([]byte(body))))); n != maxStringFaults {
			t.Errorf("%d faults, want %d", n, maxStringFaults)
		}
	})
}

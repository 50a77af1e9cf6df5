package api

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// An optional body is absent when the stream holds nothing, whether or not a length was
// announced (chunked, HTTP/2 without Content-Length); one that is there is decoded.
func TestBindOptionalJSONWithoutLength(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{"", "unchanged"},
		{`{"endpoint_id":"x"}`, "x"},
	} {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(tt.body)))
		c.Request.ContentLength, c.Request.TransferEncoding = -1, []string{"chunked"}
		c.Request.Header.Set("Content-Type", "application/json")
		dst := replayOneRequest{EndpointID: "unchanged"}
		if err := bindOptionalJSON(c, &dst); err != nil || dst.EndpointID != tt.want {
			t.Errorf("body %q: %v, endpoint_id %q; want %q", tt.body, err, dst.EndpointID, tt.want)
		}
	}
}

// checkNesting counts only the brackets of the JSON structure, never those inside
// strings (escaped quotes included), and allows exactly maxNesting levels.
func TestCheckNesting(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"flat", `{"a":1}`, true},
		{"at the limit", deep(maxNesting), true},
		{"past the limit", deep(maxNesting + 1), false},
		{"objects past the limit", strings.Repeat(`{"a":`, maxNesting+1) + "1" + strings.Repeat("}", maxNesting+1), false},
		{"brackets in a string", `{"a":"` + strings.Repeat("[{", 1000) + `"}`, true},
		{"escaped quote then brackets", `{"a":"\"` + strings.Repeat("[", 1000) + `"}`, true},
		{"escaped backslash ends the string", `{"a":"\\",` + `"b":` + deep(maxNesting+1) + `}`, false},
		{"member name with brackets", `{"` + strings.Repeat("[", 100) + `":1}`, true},
	} {
		if err := checkNesting([]byte(tt.body)); (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

// Type errors name the item at fault, not only the field (encoding/json's Field has no
// indexes), also behind custom decoders.
func TestParamAt(t *testing.T) {
	for _, tt := range []struct {
		body, field, kind, want string
	}{
		{`{"skus":[{"q":"1"},{"q":2}]}`, "skus.q", "number", "skus[1].q"},
		{`{"skus":[{"q":"1"},{"q":{}}]}`, "skus.q", "object", "skus[1].q"},
		{`{"name":1}`, "name", "number", "name"},
		{`{"a":{"b":[1,"x",true]}}`, "a.b", "bool", "a.b[2]"},
		{`{"a":1}`, "b", "number", ""},
	} {
		if got := paramAt([]byte(tt.body), tt.field, tt.kind); got != tt.want {
			t.Errorf("paramAt(%s, %s, %s) = %q, want %q", tt.body, tt.field, tt.kind, got, tt.want)
		}
	}
}

package api

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// hasBody decides by what the stream holds when no length was announced (chunked, or
// HTTP/2 without Content-Length, where TransferEncoding stays empty), and leaves the
// body whole for the reader after it.
func TestHasBodyWithoutLength(t *testing.T) {
	for _, tt := range []struct {
		body string
		want bool
	}{
		{"", false},
		{"{", true},
		{`{"endpoint_id":"x"}`, true},
	} {
		r := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(tt.body)))
		r.ContentLength, r.TransferEncoding = -1, nil
		if got := hasBody(r); got != tt.want {
			t.Errorf("hasBody(%q) = %v, want %v", tt.body, got, tt.want)
		}
		rest, err := io.ReadAll(r.Body)
		if err != nil || string(rest) != tt.body {
			t.Errorf("body after hasBody = %q, %v; want %q", rest, err, tt.body)
		}
	}
}

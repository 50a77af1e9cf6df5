package api_test

import (
	"bytes"
	"net/http"
	"testing"
)

// TestErrorMessagesAreNotHTMLEscaped: messages keep <, > and & as they are (issue 13).
func TestErrorMessagesAreNotHTMLEscaped(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/accounts", "", nil)
	if !bytes.Contains(r.Body, []byte("'Authorization: Bearer <API_KEY>'")) {
		t.Fatalf("message escaped: %s", r.Body)
	}
	r = h.do("GET", "/v1/accounts?status=%3Cb%3E%26", h.key[skSandbox], nil)
	if !bytes.Contains(r.Body, []byte(`status \"<b>&\" is not one of`)) {
		t.Fatalf("message escaped: %s", r.Body)
	}
	acct := h.mustObj(http.StatusCreated, "POST", "/v1/accounts", map[string]any{"name": "<Tom & Jerry>"})
	r = h.do("GET", "/v1/accounts/"+acct["id"].(string), h.key[skSandbox], nil)
	if !bytes.Contains(r.Body, []byte(`"name":"<Tom & Jerry>"`)) {
		t.Fatalf("object escaped: %s", r.Body)
	}
}

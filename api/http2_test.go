package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTP2BodyWithoutLength: over HTTP/2 a request body needs no Content-Length and
// HTTP/2 has no Transfer-Encoding, so the server sees a length of -1 and nothing else.
// Such a body is read like any other: a create, an idempotent create (the middleware
// reads the body first) both see it.
func TestHTTP2BodyWithoutLength(t *testing.T) {
	h := newHarness(t)
	srv := httptest.NewUnstartedServer(h.srv.Config.Handler)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := srv.Client()

	send := func(t *testing.T, method, path, body string, hdr ...string) (int, map[string]any) {
		t.Helper()
		pr, pw := io.Pipe()
		go func() {
			// Written after the request started: the client cannot know the length.
			_, _ = io.Copy(pw, strings.NewReader(body))
			_ = pw.Close()
		}()
		req, err := http.NewRequest(method, srv.URL+path, pr)
		if err != nil {
			t.Fatal(err)
		}
		if req.ContentLength != 0 {
			t.Fatalf("request has a length: %d", req.ContentLength)
		}
		req.Header.Set("Authorization", "Bearer "+h.key[skSandbox])
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.ProtoMajor != 2 {
			t.Fatalf("answered over %s, want HTTP/2", res.Proto)
		}
		var m map[string]any
		b, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%d: not JSON: %s", res.StatusCode, b)
		}
		return res.StatusCode, m
	}

	t.Run("create", func(t *testing.T) {
		status, m := send(t, "POST", "/v1/accounts", `{"name":"H2 Ltd"}`)
		if status != http.StatusCreated || m["name"] != "H2 Ltd" {
			t.Fatalf("%d %v, want 201 H2 Ltd", status, m)
		}
	})
	t.Run("idempotent create", func(t *testing.T) {
		var ids []any
		for range 2 {
			status, m := send(t, "POST", "/v1/accounts", `{"name":"H2 Idem Ltd"}`, "Idempotency-Key", "h2-no-length")
			if status != http.StatusCreated || m["name"] != "H2 Idem Ltd" {
				t.Fatalf("%d %v, want 201 H2 Idem Ltd", status, m)
			}
			ids = append(ids, m["id"])
		}
		if ids[0] != ids[1] {
			t.Fatalf("the retry created another account: %v", ids)
		}
	})
}

package cliapi_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
)

func TestErrWording(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_1")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"resource_missing","message":"No such event."}}`))
	}))
	defer srv.Close()
	c, err := cliapi.New(srv.URL, "sk_test")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetEvent(context.Background(), "e1")
	err = cliapi.Err(err)
	var apiErr *revops.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != "resource_missing" || apiErr.RequestID != "req_1" {
		t.Fatalf("errors.As: %#v", err)
	}
	if got := err.Error(); got != "404 resource_missing: No such event." {
		t.Errorf("API error reads %q", got)
	}
	if calls != 1 {
		t.Errorf("a 404 was sent %d times", calls)
	}

	srv.Close() // nothing listens any more: a network error, not retried here
	c, err = cliapi.New(srv.URL, "sk_test", revops.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetEvent(context.Background(), "e1")
	if got := cliapi.Err(err).Error(); !strings.HasPrefix(got, "GET /v1/events/e1: ") {
		t.Errorf("network error reads %q", got)
	}

	if _, err := cliapi.New("127.0.0.1:8080", "sk_test"); err == nil || strings.Contains(err.Error(), "revops: ") ||
		!strings.HasPrefix(err.Error(), "--api 127.0.0.1:8080: ") {
		t.Errorf("bad base URL: %v", err)
	}
	if cliapi.Err(nil) != nil {
		t.Error("Err(nil) is not nil")
	}
}

func TestMessageWithoutCode(t *testing.T) {
	if got := cliapi.Message(&revops.Error{Status: 502, Message: "Bad Gateway"}); got != "502: Bad Gateway" {
		t.Errorf("got %q", got)
	}
}

// The usage text that -h or a mistyped flag prints never shows $REVOPS_API_KEY, a secret
// key (flag prints a flag's default), and the key is still taken from it.
func TestTargetKeyNotInUsage(t *testing.T) {
	const secret = "sk_test_do_not_print_me"
	t.Setenv("REVOPS_API_KEY", secret)
	var tgt cliapi.Target
	var stderr bytes.Buffer
	fs := tgt.Flags("revops webhooks status", "usage: revops webhooks status", &stderr)
	if err := fs.Parse([]string{"--bogus"}); err == nil {
		t.Fatal("--bogus accepted")
	}
	if strings.Contains(stderr.String(), secret) {
		t.Errorf("usage shows the key:\n%s", stderr.String())
	}
	if err := tgt.Resolve(); err != nil || tgt.Key != secret {
		t.Errorf("Resolve: key %q, %v; want $REVOPS_API_KEY's", tgt.Key, err)
	}
}

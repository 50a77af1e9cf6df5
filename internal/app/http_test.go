package app

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/revops/revops/internal/domain/webhook"
)

// CONTRACT §15: the API's server bounds every phase of a connection, and a response may
// outlast the dashboard's webhook test send.
func TestHTTPServerTimeouts(t *testing.T) {
	srv := NewHTTPServer(http.NotFoundHandler(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for name, d := range map[string]int64{
		"ReadHeaderTimeout": int64(srv.ReadHeaderTimeout),
		"ReadTimeout":       int64(srv.ReadTimeout),
		"WriteTimeout":      int64(srv.WriteTimeout),
		"IdleTimeout":       int64(srv.IdleTimeout),
	} {
		if d <= 0 {
			t.Errorf("%s not set", name)
		}
	}
	if srv.WriteTimeout <= webhook.DefaultTimeout {
		t.Errorf("WriteTimeout %v does not outlast the %v test send", srv.WriteTimeout, webhook.DefaultTimeout)
	}
}

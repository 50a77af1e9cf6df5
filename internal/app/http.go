package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
)

// Timeouts of the API's HTTP server (CONTRACT §15). A response may take as long as the
// dashboard's webhook test send (webhook.DefaultTimeout, 30 s) plus its own work, so
// WriteTimeout leaves 30 s more; reading a request, headers and a body of at most 1 MiB,
// never takes that long; an idle keep-alive connection is closed after IdleTimeout.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = webhook.DefaultTimeout + 30*time.Second
	IdleTimeout       = 120 * time.Second
)

// NewHTTPServer is the API's server, the same for serve, api and dev: slow or stalled
// clients cannot hold a connection forever.
func NewHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// serveHTTP runs srv until ctx ends, then lets in-flight requests finish (up to 20 s).
func serveHTTP(ctx context.Context, srv *http.Server, ln net.Listener, tlsCert, tlsKey string) error {
	errc := make(chan error, 1)
	go func() {
		var err error
		if tlsCert != "" {
			err = srv.ServeTLS(ln, tlsCert, tlsKey)
		} else {
			err = srv.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
		close(errc)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	return <-errc
}

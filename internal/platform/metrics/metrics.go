// Package metrics defines the Prometheus metrics of Revops (all prefixed revops_) and
// serves them on their own listen address.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	netpprof "net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Timeouts of the metrics listener. A scrape is one small GET and an answer rendered
// from memory: no phase needs long, and a stalled client must not keep its connection.
// (internal/app's NewHTTPServer imports this package, hence its own values here.)
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
)

func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
}

// Serve exposes /metrics on addr until ctx ends, and Go's profiler at /debug/pprof/ when
// pprof is set (config.Config.Pprof, REVOPS_PPROF=1).
func Serve(ctx context.Context, addr string, pprof bool) (net.Addr, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	if pprof {
		mux.HandleFunc("/debug/pprof/", netpprof.Index)
		mux.HandleFunc("/debug/pprof/profile", netpprof.Profile)
	}
	srv := newServer(mux)
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	return ln.Addr(), errc, nil
}

// newCounterVec and newCounter register a counter of Revops on the default registry (which
// Serve exposes), with the given bounded labels.
func newCounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return promauto.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func newCounter(name, help string) prometheus.Counter {
	return promauto.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

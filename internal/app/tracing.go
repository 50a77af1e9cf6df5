package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/revops/revops/internal/platform/tracing"
)

// StartTracing switches tracing on when the OTEL_* variables ask for it (CONTRACT §19)
// and returns what flushes its last spans at exit.
func StartTracing(ctx context.Context, log *slog.Logger, service string) (*tracing.Tracing, func(), error) {
	tr, err := tracing.Start(ctx, os.Getenv, service, func(w string) { log.Warn("tracing: " + w) })
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	if tr != nil {
		log.Info("tracing on", "traces", tr.Describe())
	}
	return tr, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tr.Shutdown(ctx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}, nil
}

// logExportErrors sends OpenTelemetry's errors (a collector away) to log: the embedded
// Temporal server replaces OpenTelemetry's global handler with its own logger, which
// `revops dev` silences.
func logExportErrors(log *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
}

// withholdOTELFromTemporal removes the OTEL_* variables from the process's environment,
// which the embedded Temporal server reads when it starts (and which stop it when they
// name what it cannot do, an http/protobuf exporter for one): by default `revops dev`
// keeps them to Revops's own tracing, whose exporter has read them already.
func withholdOTELFromTemporal() {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "OTEL_") {
			_ = os.Unsetenv(name)
		}
	}
}

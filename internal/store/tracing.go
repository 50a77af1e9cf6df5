package store

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/revops/revops/internal/platform/tracing"
)

// span opens the database span of a unit of work (a change's transaction, a usage
// batch, a meter's) under ctx's span, when tracing is on (CONTRACT §19). end closes it,
// marking it failed when *err is set; the database's message stays out of it (it may
// quote the values written).
func (s *Store) span(ctx context.Context, name string) (context.Context, func(err *error)) {
	if !tracing.On() {
		return ctx, func(*error) {}
	}
	system := "sqlite"
	if s.dialect == "postgres" {
		system = "postgresql"
	}
	ctx, sp := otel.Tracer("revops/store").Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system", system)))
	return ctx, func(err *error) {
		if err != nil && *err != nil {
			sp.SetStatus(codes.Error, "failed")
		}
		sp.End()
	}
}

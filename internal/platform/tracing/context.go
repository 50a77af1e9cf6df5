package tracing

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceContext reads and writes W3C traceparent whatever the global propagator is: the
// trace context stored with a row must read back the same in every process.
var traceContext = propagation.TraceContext{}

// TraceParent is the W3C traceparent of ctx's span, "" when it has none (tracing off).
// It is what a row keeps so that work done later, in another process, joins the trace.
func TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() { // tracing off: no span, nothing to do
		return ""
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	return carrier.Get("traceparent")
}

// TraceID is the trace id (32 hex digits) of a traceparent, "" when it has none.
func TraceID(traceparent string) string {
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		return ""
	}
	return parts[1]
}

// SpanTraceID is the trace id of ctx's span, "" when it has none.
func SpanTraceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// LinkTo is a link to the span of traceparent (none when it names none): a replay's
// trace points to the original's.
func LinkTo(traceparent string) []trace.Link {
	sc := trace.SpanContextFromContext(WithParent(context.Background(), traceparent))
	if !sc.IsValid() {
		return nil
	}
	return []trace.Link{{SpanContext: sc}}
}

// WithParent returns ctx with the span of traceparent as its remote parent: work started
// from a stored row continues the trace that wrote it. An empty or unreadable
// traceparent leaves ctx as it is.
func WithParent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

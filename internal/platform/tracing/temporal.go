package tracing

import (
	"go.opentelemetry.io/otel"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// TemporalInterceptor traces workflow starts, workflow runs and activity attempts with
// the Temporal SDK's OpenTelemetry interceptor (CONTRACT §19): the trace context travels
// in the workflow's and activities' headers, W3C trace context without baggage (baggage
// could carry what a client put there into histories).
func TemporalInterceptor() interceptor.Interceptor {
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            otel.Tracer("revops/temporal"),
		TextMapPropagator: traceContext,
		DisableBaggage:    true,
		// Queries (the UI's stack traces, our own reads) are not part of a delivery.
		DisableQueryTracing: true,
	})
	if err != nil { // only for options it cannot use; these are fixed
		panic("tracing: Temporal interceptor: " + err.Error())
	}
	return i
}

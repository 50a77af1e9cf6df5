package tracing

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// on is whether Start installed a provider: instrumentation is added only then, so that
// tracing off costs nothing.
var on atomic.Bool

// On reports whether tracing is on in this process.
func On() bool { return on.Load() }

// Tracing is tracing switched on: the provider installed as OpenTelemetry's global one.
type Tracing struct {
	Config
	provider *sdktrace.TracerProvider
}

// Start reads the OTEL_* variables (getenv: os.Getenv) and, when they switch tracing on,
// installs a tracer provider exporting over OTLP and the W3C trace context propagator as
// OpenTelemetry's globals. It returns nil when tracing is off. service names the process
// (revops-api, revops-worker, revops-dev) unless OTEL_SERVICE_NAME does; warn hears
// about the variables it ignored.
func Start(ctx context.Context, getenv func(string) string, service string, warn func(string)) (*Tracing, error) {
	cfg, enabled, warnings := FromEnv(getenv)
	for _, w := range warnings {
		warn(w)
	}
	if !enabled {
		return nil, nil
	}
	var client otlptrace.Client
	if cfg.Protocol == ProtocolGRPC {
		client = otlptracegrpc.NewClient()
	} else {
		client = otlptracehttp.NewClient()
	}
	exporter, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// The default name first: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by
	// WithFromEnv, later) override it.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res),
		sdktrace.WithSampler(cfg.sampler))
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	on.Store(true)
	return &Tracing{Config: cfg, provider: provider}, nil
}

// Shutdown sends the spans still buffered and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Describe says where traces go, for the startup banner (nothing secret).
func (t *Tracing) Describe() string {
	if t == nil {
		return "off (no OTEL_TRACES_EXPORTER=otlp or OTLP endpoint set)"
	}
	return fmt.Sprintf("otlp/%s → %s, sampler %s", t.Protocol, t.Endpoint, t.Sampler)
}

package tracing

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      func(string) string
		on       bool
		protocol string
		endpoint string
		warn     string // a warning naming this
	}{
		{name: "nothing set", env: env()},
		{name: "service name alone", env: env("OTEL_SERVICE_NAME", "x")},
		{name: "exporter otlp", env: env("OTEL_TRACES_EXPORTER", "otlp"), on: true, protocol: ProtocolHTTP, endpoint: "localhost:4318"},
		{name: "endpoint alone", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"), on: true, protocol: ProtocolHTTP,
			endpoint: "http://collector:4318"},
		{name: "traces endpoint wins, userinfo and query hidden", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://user:pw@b:4318/v1/traces?token=s"), on: true, protocol: ProtocolHTTP,
			endpoint: "https://b:4318/v1/traces"},
		{name: "grpc", env: env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), on: true, protocol: ProtocolGRPC,
			endpoint: "localhost:4317"},
		{name: "traces protocol wins", env: env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"), on: true, protocol: ProtocolHTTP, endpoint: "localhost:4318"},
		{name: "exporter none beats an endpoint", env: env("OTEL_TRACES_EXPORTER", "none", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1")},
		{name: "sdk disabled", env: env("OTEL_SDK_DISABLED", "true", "OTEL_TRACES_EXPORTER", "otlp")},
		{name: "case does not matter", env: env("OTEL_TRACES_EXPORTER", "OTLP", "OTEL_EXPORTER_OTLP_PROTOCOL", "GRPC"), on: true,
			protocol: ProtocolGRPC, endpoint: "localhost:4317"},
		{name: "a list with otlp", env: env("OTEL_TRACES_EXPORTER", "console, otlp"), on: true, protocol: ProtocolHTTP,
			endpoint: "localhost:4318", warn: `"console" ignored`},
		{name: "only an unknown exporter", env: env("OTEL_TRACES_EXPORTER", "zipkin", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"),
			warn: `"zipkin" ignored`},
		{name: "json protocol", env: env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), on: true,
			protocol: ProtocolHTTP, endpoint: "localhost:4318", warn: `"http/json" ignored`},
		{name: "unknown sampler", env: env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_TRACES_SAMPLER", "jaeger_remote"), on: true,
			protocol: ProtocolHTTP, endpoint: "localhost:4318", warn: `"jaeger_remote" ignored`},
		{name: "bad ratio", env: env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "2"),
			on: true, protocol: ProtocolHTTP, endpoint: "localhost:4318", warn: "OTEL_TRACES_SAMPLER_ARG"},
		{name: "b3 propagation", env: env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_PROPAGATORS", "b3"), on: true,
			protocol: ProtocolHTTP, endpoint: "localhost:4318", warn: "OTEL_PROPAGATORS"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, on, warnings := FromEnv(c.env)
			if on != c.on || cfg.Protocol != c.protocol || cfg.Endpoint != c.endpoint {
				t.Fatalf("got on %v protocol %q endpoint %q, want on %v protocol %q endpoint %q",
					on, cfg.Protocol, cfg.Endpoint, c.on, c.protocol, c.endpoint)
			}
			if warned := strings.Join(warnings, "\n"); (c.warn == "") != (warned == "") || !strings.Contains(warned, c.warn) {
				t.Fatalf("warnings %q, want one naming %q", warned, c.warn)
			}
		})
	}
}

// A client's traceparent never decides: sampled or not, the root sampler does; a parent
// inside Revops (local) is followed.
func TestSamplerIgnoresTheClientsFlag(t *testing.T) {
	remote := func(sampled bool) oteltrace.SpanContext {
		flags := oteltrace.TraceFlags(0)
		if sampled {
			flags = oteltrace.FlagsSampled
		}
		return oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: oteltrace.TraceID{1}, SpanID: oteltrace.SpanID{1},
			TraceFlags: flags, Remote: true})
	}
	local := func(sampled bool) oteltrace.SpanContext {
		sc := remote(sampled)
		return sc.WithRemote(false)
	}
	for _, c := range []struct {
		sampler string
		parent  oteltrace.SpanContext
		want    bool
	}{
		{"parentbased_always_off", remote(true), false},
		{"parentbased_always_on", remote(false), true},
		{"parentbased_always_off", local(true), true},
		{"parentbased_always_on", local(false), false},
		{"always_off", local(true), false},
	} {
		cfg, _, warnings := FromEnv(env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_TRACES_SAMPLER", c.sampler))
		if len(warnings) > 0 {
			t.Fatal(warnings)
		}
		ctx := oteltrace.ContextWithSpanContext(t.Context(), c.parent)
		got := cfg.sampler.ShouldSample(trace.SamplingParameters{ParentContext: ctx, TraceID: c.parent.TraceID(), Name: "x"})
		if sampled := got.Decision == trace.RecordAndSample; sampled != c.want {
			t.Errorf("%s with parent (remote %v, sampled %v): sampled %v, want %v", c.sampler, c.parent.IsRemote(),
				c.parent.IsSampled(), sampled, c.want)
		}
	}
}

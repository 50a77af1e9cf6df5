// Package tracing sets up OpenTelemetry traces from the standard OTEL_* variables
// (CONTRACT §19): on only when an OTLP exporter or endpoint is named, off and free
// otherwise. Off, nothing is installed: the global tracer provider stays OpenTelemetry's
// no-op one, whose spans cost a context lookup.
package tracing

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Protocols of the OTLP exporter.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Config is what the OTEL_* variables ask for. The exporters read the rest themselves
// when created (endpoint, headers, certificates, compression, timeout), and the resource
// its service name and attributes.
type Config struct {
	Protocol string // ProtocolGRPC or ProtocolHTTP
	Endpoint string // where spans go, for people: no userinfo, path or query
	Sampler  string // the sampler's description, for people
	sampler  sdktrace.Sampler
}

// FromEnv reads the configuration from getenv (os.Getenv). on is false when tracing is
// off: no OTLP exporter or endpoint is named, OTEL_TRACES_EXPORTER is none, or
// OTEL_SDK_DISABLED is true. A variable Revops cannot honour is an error, so that a
// process never runs without the traces its operator asked for.
func FromEnv(getenv func(string) string) (cfg Config, on bool, err error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return Config{}, false, nil
	}
	endpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if endpoint == "" {
		endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	switch exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "none":
		return Config{}, false, nil
	case "":
		if endpoint == "" {
			return Config{}, false, nil
		}
	case "otlp":
	default:
		return Config{}, false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: Revops exports traces over OTLP only (otlp, or none)", exporter)
	}
	cfg.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if cfg.Protocol == "" {
		cfg.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch cfg.Protocol {
	case "":
		cfg.Protocol = ProtocolHTTP // the specification's default
	case ProtocolGRPC, ProtocolHTTP:
	default:
		return Config{}, false, fmt.Errorf("OTLP protocol %q: Revops exports over grpc or http/protobuf", cfg.Protocol)
	}
	cfg.Endpoint = displayEndpoint(endpoint, cfg.Protocol)
	if cfg.sampler, cfg.Sampler, err = samplerFromEnv(getenv); err != nil {
		return Config{}, false, err
	}
	return cfg, true, nil
}

// samplerFromEnv reads OTEL_TRACES_SAMPLER and its argument. A parent-based sampler
// follows parents within Revops only: a parent from outside (the client's traceparent,
// sampled or not) is decided by the root sampler, so that a client's flag never forces
// sampling (CONTRACT §19), while every process decides one trace the same way (the ratio
// sampler reads the trace id).
func samplerFromEnv(getenv func(string) string) (sdktrace.Sampler, string, error) {
	name := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	if name == "" {
		name = "parentbased_always_on"
	}
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := 1.0
	if strings.HasSuffix(name, "traceidratio") && arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, "", fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	var root sdktrace.Sampler
	base, parentBased := strings.CutPrefix(name, "parentbased_")
	switch base {
	case "always_on":
		root = sdktrace.AlwaysSample()
	case "always_off":
		root = sdktrace.NeverSample()
	case "traceidratio":
		root = sdktrace.TraceIDRatioBased(ratio)
		name = fmt.Sprintf("%s %g", name, ratio)
	default:
		return nil, "", fmt.Errorf("OTEL_TRACES_SAMPLER=%q: one of always_on, always_off, traceidratio and their parentbased_ forms", name)
	}
	if !parentBased {
		return root, name, nil
	}
	return sdktrace.ParentBased(root,
		sdktrace.WithRemoteParentSampled(root), sdktrace.WithRemoteParentNotSampled(root)), name, nil
}

// displayEndpoint is where spans go, without what may be secret (userinfo, query); the
// exporters' defaults when none is named.
func displayEndpoint(endpoint, protocol string) string {
	if endpoint == "" {
		if protocol == ProtocolGRPC {
			return "localhost:4317"
		}
		return "localhost:4318"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "(an endpoint that is not a URL)"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

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
// off: no OTLP exporter or endpoint is named, OTEL_TRACES_EXPORTER names none (or only
// exporters Revops lacks), or OTEL_SDK_DISABLED is true. As the specification asks,
// values are matched without regard to case, and one Revops cannot honour is ignored
// with a warning (its default used instead) rather than stopping the process.
func FromEnv(getenv func(string) string) (cfg Config, on bool, warnings []string) {
	get := func(name string) string { return strings.ToLower(strings.TrimSpace(getenv(name))) }
	if get("OTEL_SDK_DISABLED") == "true" {
		return Config{}, false, nil
	}
	endpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if endpoint == "" {
		endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	if exporters := get("OTEL_TRACES_EXPORTER"); exporters != "" {
		otlp := false
		for _, e := range strings.Split(exporters, ",") {
			switch e = strings.TrimSpace(e); e {
			case "otlp":
				otlp = true
			case "none", "":
			default:
				warnings = append(warnings, fmt.Sprintf("OTEL_TRACES_EXPORTER: %q ignored, Revops exports traces over OTLP only", e))
			}
		}
		if !otlp {
			return Config{}, false, warnings
		}
	} else if endpoint == "" {
		return Config{}, false, nil
	}
	cfg.Protocol = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if cfg.Protocol == "" {
		cfg.Protocol = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch cfg.Protocol {
	case ProtocolGRPC, ProtocolHTTP:
	default:
		if cfg.Protocol != "" {
			warnings = append(warnings, fmt.Sprintf("OTLP protocol %q ignored, Revops exports over grpc or http/protobuf: using http/protobuf", cfg.Protocol))
		}
		cfg.Protocol = ProtocolHTTP // the specification's default
	}
	if p := get("OTEL_PROPAGATORS"); p != "" && p != "tracecontext" {
		warnings = append(warnings, fmt.Sprintf("OTEL_PROPAGATORS=%q ignored: Revops propagates W3C trace context (tracecontext) only", p))
	}
	cfg.Endpoint = displayEndpoint(endpoint, cfg.Protocol)
	var w []string
	cfg.sampler, cfg.Sampler, w = samplerFromEnv(get)
	return cfg, true, append(warnings, w...)
}

// samplerFromEnv reads OTEL_TRACES_SAMPLER and its argument. A parent-based sampler
// follows parents within Revops only: a parent from outside (the client's traceparent,
// sampled or not) is decided by the root sampler, so that a client's flag never forces
// sampling (CONTRACT §19), while every process decides one trace the same way (the ratio
// sampler reads the trace id; a client choosing its trace id can therefore aim at the
// ratio, which is why always_on or always_off roots are the ones to rely on).
func samplerFromEnv(get func(string) string) (sdktrace.Sampler, string, []string) {
	var warnings []string
	name := get("OTEL_TRACES_SAMPLER")
	if name == "" {
		name = "parentbased_always_on"
	}
	ratio := 1.0
	if arg := get("OTEL_TRACES_SAMPLER_ARG"); strings.HasSuffix(name, "traceidratio") && arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			warnings = append(warnings, fmt.Sprintf("OTEL_TRACES_SAMPLER_ARG=%q ignored, not a ratio from 0 to 1: using 1", arg))
		} else {
			ratio = r
		}
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
		warnings = append(warnings, fmt.Sprintf("OTEL_TRACES_SAMPLER=%q ignored: using parentbased_always_on", name))
		name, root, parentBased = "parentbased_always_on", sdktrace.AlwaysSample(), true
	}
	if !parentBased {
		return root, name, warnings
	}
	return sdktrace.ParentBased(root,
		sdktrace.WithRemoteParentSampled(root), sdktrace.WithRemoteParentNotSampled(root)), name, warnings
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

package tracing_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/revops/revops/internal/platform/tracing"
)

// discard is an OTLP/gRPC receiver that decodes what it is sent, counts the spans and
// keeps nothing.
type discard struct {
	coltracepb.UnimplementedTraceServiceServer
	spans atomic.Int64
}

func (d *discard) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			d.spans.Add(int64(len(ss.GetSpans())))
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// BenchmarkDeliverySpans is the CPU tracing adds to one delivery at full sampling: the
// seven spans a traced delivery makes (docs/benchmarks.md counts them at the sink: the
// API request, its database change, the workflow start, the run, the activity's start
// and run, the webhook request), with attributes alike and the traceparent carried twice
// as text, recorded and exported over OTLP/gRPC by the batch exporter Revops uses. The
// receiver runs in this process (the gRPC decoding counts), so the figure is an upper
// bound. cpu_µs/delivery is read from getrusage; on this shared machine it is steadier
// than the delivery benchmark's own CPU per change, which moves by more than this.
func BenchmarkDeliverySpans(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := grpc.NewServer()
	sink := &discard{}
	coltracepb.RegisterTraceServiceServer(srv, sink)
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	// The exporter reads the variables from the environment itself.
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+l.Addr().String())
	b.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	// The loop makes spans far faster than deliveries do: the queue holds them all, so
	// that every span is exported and counted, none dropped.
	b.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", strconv.Itoa(7*b.N+1))
	ctx := context.Background()
	tr, err := tracing.Start(ctx, os.Getenv, "revops-bench", func(w string) { b.Log(w) })
	if err != nil || tr == nil {
		b.Fatalf("start: %v", err)
	}
	tracer := otel.Tracer("bench")
	prop := otel.GetTextMapPropagator()
	attrs := []attribute.KeyValue{
		attribute.String("revops.event_id", "0b6f3c1e-8d52-4c39-9a51-4f3f0f8e2a11"), attribute.String("revops.event_type", "deal-updated"),
		attribute.String("revops.endpoint_id", "we_2a11"), attribute.String("revops.delivery_id", "d8a4e1c2-1f64-4b7e-93b6-5e1c0a7f6d12"),
		attribute.Int("revops.attempt", 1), attribute.String("revops.outcome", "delivered"), attribute.Int("http.response.status_code", 200),
	}
	span := func(ctx context.Context, name string, kind trace.SpanKind, n int) context.Context {
		ctx, sp := tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs[:n]...))
		sp.End()
		return ctx
	}
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		carrier := propagation.HeaderCarrier{}
		carrier.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		c := prop.Extract(ctx, carrier)
		c = span(c, "PATCH /v1/deals/:id", trace.SpanKindServer, 2)
		span(c, "db change", trace.SpanKindInternal, 0)
		c = span(c, "StartWorkflow:WebhookDelivery", trace.SpanKindClient, 0)
		prop.Inject(c, carrier) // into the workflow's header
		c = span(prop.Extract(ctx, carrier), "RunWorkflow:WebhookDelivery", trace.SpanKindServer, 0)
		c = span(c, "StartActivity:DeliverWebhook", trace.SpanKindClient, 0)
		c = span(c, "RunActivity:DeliverWebhook", trace.SpanKindServer, len(attrs))
		c = span(c, "POST webhook", trace.SpanKindClient, 2)
		prop.Inject(c, carrier) // into the webhook request
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tr.Shutdown(sctx); err != nil { // the last batches are exported, and counted
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu_µs/delivery")
	// Spans the batch processor dropped (its queue full) were not exported: the figure
	// holds only when every span arrived.
	if got, want := sink.spans.Load(), int64(7*b.N); got != want {
		b.Errorf("%d spans arrived, want %d", got, want)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

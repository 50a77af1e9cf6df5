package e2e

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/models"
)

// A delivery the API could not start (its process ended between the commit and the
// start) is started later by the sweeper, in another process, from the row alone: the
// start, the run and the attempt still join the trace of the request that made the
// change (CONTRACT §19), because the row carries its traceparent.
func TestSweptStartJoinsTheRowsTrace(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev); _ = tp.Shutdown(context.Background()) })

	s := newStack(t)
	traced, err := client.NewClientFromExisting(s.ts.GetDefaultClient(), client.Options{Namespace: s.ts.GetDefaultNamespace(),
		Interceptors: []interceptor.ClientInterceptor{tracing.TemporalInterceptor()}})
	if err != nil {
		t.Fatal(err)
	}
	defer traced.Close()

	const requestTrace, requestSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ev := s.db.TracedEvent(t, "deal-updated", map[string]any{"id": "swept"}, "00-"+requestTrace+"-"+requestSpan+"-01")
	w := s.workerOf(traced)
	defer w.Stop()
	if n, err := s.starter(traced).Sweep(context.Background()); err != nil || n != 1 {
		t.Fatalf("sweep started %d (err %v), want 1", n, err)
	}
	s.waitStatus([]models.Event{ev}, models.EventDelivered, time.Minute)
	_ = tp.ForceFlush(context.Background())

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range spans.GetSpans().Snapshots() {
		byName[sp.Name()] = sp
	}
	start, ok := byName["StartWorkflow:WebhookDelivery"]
	if !ok {
		t.Fatalf("no workflow start span among %v", names(spans))
	}
	if got := start.SpanContext().TraceID().String(); got != requestTrace {
		t.Errorf("the swept start is in trace %s, want the row's %s", got, requestTrace)
	}
	if got := start.Parent().SpanID().String(); got != requestSpan {
		t.Errorf("the swept start's parent is span %s, want the row's %s", got, requestSpan)
	}
	for _, name := range []string{"RunWorkflow:WebhookDelivery", "RunActivity:DeliverWebhook"} {
		sp, ok := byName[name]
		if !ok {
			t.Errorf("no %s span among %v", name, names(spans))
			continue
		}
		if got := sp.SpanContext().TraceID().String(); got != requestTrace {
			t.Errorf("%s is in trace %s, want the row's %s", name, got, requestTrace)
		}
	}
}

func names(e *tracetest.InMemoryExporter) []string {
	var out []string
	for _, sp := range e.GetSpans() {
		out = append(out, sp.Name)
	}
	return out
}

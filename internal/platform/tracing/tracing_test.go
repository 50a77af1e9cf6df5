package tracing_test

import (
	"context"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"

	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/testkit/otlpsink"
)

// Spans leave the process over OTLP, by either protocol, with the service's name.
func TestStartExportsOverOTLP(t *testing.T) {
	srv, err := otlpsink.Listen("127.0.0.1:0", "127.0.0.1:0", &otlpsink.Sink{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, c := range []struct{ protocol, endpoint string }{
		{tracing.ProtocolGRPC, "http://" + srv.GRPCAddr},
		{tracing.ProtocolHTTP, "http://" + srv.HTTPAddr},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.protocol)
			ctx := context.Background()
			tr, err := tracing.Start(ctx, os.Getenv, "revops-test", func(w string) { t.Error(w) })
			if err != nil || tr == nil {
				t.Fatalf("start: %v (tracing %v)", err, tr)
			}
			_, span := otel.Tracer("test").Start(ctx, "work "+c.protocol)
			span.SetAttributes(attribute.String("revops.event_id", "evt_1"))
			span.End()
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := tr.Shutdown(sctx); err != nil {
				t.Fatal(err)
			}
			for _, sp := range srv.Spans() {
				if sp.Name == "work "+c.protocol {
					if sp.Service != "revops-test" || sp.Attributes["revops.event_id"] != "evt_1" || sp.TraceID != span.SpanContext().TraceID().String() {
						t.Fatalf("received %+v", sp)
					}
					return
				}
			}
			t.Fatalf("span not received; got %+v", srv.Spans())
		})
	}
}

package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A client's traceparent is continued when it is well formed; anything else (a bad
// version, length or character, an all-zero id) is ignored: the request is answered as
// usual, in a trace of its own, and the header's text goes nowhere.
func TestTraceRequestsContinuesOnlyAWellFormedTraceparent(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		_ = tp.Shutdown(context.Background())
	})
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(traceRequests)
	r.GET("/v1/deals/:id", func(c *gin.Context) { c.Status(http.StatusOK) })

	const trace, span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, c := range []struct {
		header    string
		continued bool
	}{
		{"00-" + trace + "-" + span + "-01", true},
		{"00-" + trace + "-" + span + "-00", true}, // not sampled by the client: still its trace
		{"ff-" + trace + "-" + span + "-01", false},
		{"00-" + trace[:30] + "-" + span + "-01", false},
		{"00-" + trace + "-" + span + "-01-extra", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e473z-" + span + "-01", false},
		{"00-00000000000000000000000000000000-" + span + "-01", false},
		{"00-" + trace + "-0000000000000000-01", false},
		{"00-" + trace + "-" + span + "-01\x00<script>", false},
		{"", false},
	} {
		spans.Reset()
		req := httptest.NewRequest("GET", "/v1/deals/d_1?limit=1", nil)
		req.Header.Set("traceparent", c.header)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Errorf("traceparent %q: answered %d", c.header, w.Code)
		}
		got := spans.GetSpans()
		if len(got) != 1 {
			t.Fatalf("traceparent %q: %d spans", c.header, len(got))
		}
		sp := got[0]
		continued := sp.SpanContext.TraceID().String() == trace && sp.Parent.SpanID().String() == span
		if continued != c.continued {
			t.Errorf("traceparent %q: span in trace %s under %s, continued %v, want %v", c.header,
				sp.SpanContext.TraceID(), sp.Parent.SpanID(), continued, c.continued)
		}
		if !c.continued && sp.Parent.IsValid() {
			t.Errorf("traceparent %q: span has a parent %v", c.header, sp.Parent)
		}
		if sp.Name != "GET /v1/deals/:id" {
			t.Errorf("span named %q", sp.Name)
		}
	}
}

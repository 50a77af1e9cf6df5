package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceRequests opens the server span of each request (CONTRACT §19), continuing a W3C
// traceparent the client sent (the sampler, not the client's flag, decides whether it
// is kept). The span is named and described by the route's pattern, never by the URL
// path or query, which carry ids and filters. Installed only when tracing is on.
func traceRequests(c *gin.Context) {
	ctx := otel.GetTextMapPropagator().Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
	route := c.FullPath() // "" when no route matched
	name := c.Request.Method + " " + route
	if route == "" {
		name = c.Request.Method
	}
	ctx, span := otel.Tracer("revops/api").Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", c.Request.Method), attribute.String("http.route", route)))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/models"
)

// observeRequests records every request in the revops_http_* metrics, labelled with
// the route template (c.FullPath) so that ids in paths cannot explode the series count;
// requests matching no route (404, and errors before routing) count as "unmatched".
func observeRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	metrics.HTTPRequest(methodLabel(c.Request.Method), route, c.Writer.Status(), time.Since(start))
}

// knownMethods are the methods counted under their own name; a client may send any
// token as a method, and each new label value would be a new series kept forever.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
	http.MethodConnect: true, http.MethodTrace: true,
}

// methodLabel is the method label of revops_http_*: the method, or OTHER (CONTRACT §15).
func methodLabel(m string) string {
	if knownMethods[m] {
		return m
	}
	return "OTHER"
}

// countEmitted counts committed events by type (revops_events_emitted_total).
func countEmitted(events []models.Event) {
	for _, e := range events {
		metrics.EventEmitted(e.Type)
	}
}

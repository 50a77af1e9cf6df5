package api

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/metrics"
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
	metrics.HTTPRequest(c.Request.Method, route, c.Writer.Status(), time.Since(start))
}

// countEmitted counts committed events by type (revops_events_emitted_total).
func countEmitted(events []models.Event) {
	for _, e := range events {
		metrics.EventEmitted(e.Type)
	}
}

package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
)

// GET /v1/webhook_endpoints/{id}/stats (CONTRACT §23): from, to and window read as §18's
// values query reads them; webhook.EndpointStats checks the boundaries and the window
// bound and reads the rollups.

// endpointStatsObject is the answer of GET /v1/webhook_endpoints/{id}/stats.
type endpointStatsObject struct {
	Object     string          `json:"object"`
	EndpointID string          `json:"endpoint_id"`
	Window     string          `json:"window"`
	Data       []endpointStats `json:"data"`
}

type endpointStats struct {
	WindowStart   string  `json:"window_start"`
	WindowEnd     string  `json:"window_end"`
	Attempts      int64   `json:"attempts"`
	Succeeded     int64   `json:"succeeded"`
	Failed        int64   `json:"failed"`
	Timeouts      int64   `json:"timeouts"`
	SuccessRate   float64 `json:"success_rate"`
	DurationMSP50 int64   `json:"duration_ms_p50"`
	DurationMSP95 int64   `json:"duration_ms_p95"`
}

func toEndpointStats(id string, q webhook.StatsQuery, ws []webhook.StatsWindow) endpointStatsObject {
	out := endpointStatsObject{Object: "endpoint_stats", EndpointID: id, Window: q.Window, Data: make([]endpointStats, len(ws))}
	for i, w := range ws {
		out.Data[i] = endpointStats{WindowStart: w.Start.UTC().Format(time.RFC3339), WindowEnd: w.End.UTC().Format(time.RFC3339),
			Attempts: w.Attempts, Succeeded: w.Succeeded, Failed: w.Failed, Timeouts: w.Timeouts,
			SuccessRate: w.SuccessRate, DurationMSP50: w.P50MS, DurationMSP95: w.P95MS}
	}
	return out
}

func (s *Server) endpointStats(c *gin.Context) {
	q, err := statsQuery(c)
	if err != nil {
		fail(c, err)
		return
	}
	id := c.Param("id")
	ws, err := webhook.EndpointStats(c.Request.Context(), s.store, principal(c).Env, id, q)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toEndpointStats(id, q, ws))
}

// statsQuery reads from, to (required RFC 3339 times, as §18's) and window.
func statsQuery(c *gin.Context) (webhook.StatsQuery, error) {
	var q webhook.StatsQuery
	if err := checkQuery(c); err != nil {
		return q, err
	}
	var fs apperr.Faults
	q.From, q.To = boundQuery(c, "from", &fs), boundQuery(c, "to", &fs)
	switch w := c.Query("window"); w {
	case "":
		fs.Missing("window")
	case webhook.StatsWindowHour, webhook.StatsWindowDay:
		q.Window = w
	default:
		fs.Invalid("window", "window must be hour or day.")
	}
	return q, fs.Err()
}

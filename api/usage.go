package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/models"
)

func (s *Server) ingestUsage(c *gin.Context) {
	body, err := readBody(c)
	if err == nil && body == nil {
		err = httperr.Request(http.StatusBadRequest, apperr.CodeInvalidJSON, "", "A JSON request body is required.")
	}
	if err != nil {
		fail(c, err)
		return
	}
	env := principal(c).Env
	reply := replyAs[usage.StoredReceipt](c, http.StatusCreated)
	// Microseconds: what PostgreSQL keeps, so the response and the stored rows agree.
	res, err := usage.Ingest(c.Request.Context(), s.store, env, body, time.Now().UTC().Truncate(time.Microsecond), reply)
	if err != nil {
		fail(c, err)
		return
	}
	if !res.Duplicate {
		metrics.UsageAccepted(env.Name, res.Batch.MetricsCount)
		render(c, reply.Status(), res.StoredReceipt())
		return
	}
	var replay usage.Receipt
	if err := json.Unmarshal([]byte(res.Batch.Response), &replay); err != nil {
		fail(c, err)
		return
	}
	replay.Duplicate = true
	c.Header("Idempotent-Replayed", "true")
	render(c, http.StatusOK, replay)
}

type usageEventResponse struct {
	ID               string          `json:"id"`
	Object           string          `json:"object"`
	TransactionID    string          `json:"transaction_id"`
	Mode             string          `json:"mode"`
	AccountID        string          `json:"account_id"`
	Product          string          `json:"product"`
	MetricName       string          `json:"metric_name"`
	MetricValue      json.Number     `json:"metric_value"`
	MetricResolution string          `json:"metric_resolution"`
	Metadata         json.RawMessage `json:"metadata"`
	Timestamp        string          `json:"timestamp"`
	ReceivedAt       string          `json:"received_at"`
}

func toUsageEventResponse(e models.UsageEvent) usageEventResponse {
	return usageEventResponse{ID: e.ID, Object: "usage_event", TransactionID: e.TransactionID, Mode: e.Mode,
		AccountID: e.AccountID, Product: e.Product, MetricName: e.MetricName,
		MetricValue: json.Number(decimal.Canonical(e.MetricValue)), MetricResolution: e.MetricResolution,
		Metadata: json.RawMessage(e.Metadata), Timestamp: e.Timestamp.UTC().Format(time.RFC3339Nano),
		ReceivedAt: e.ReceivedAt.UTC().Format(time.RFC3339Nano)}
}

func (s *Server) listUsageEvents(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	f := usage.EventFilter{AccountID: c.Query("account_id"), Product: c.Query("product"),
		MetricName: c.Query("metric_name"), TransactionID: c.Query("transaction_id")}
	var fs apperr.Faults
	f.From, f.To = timeQuery(c, "from", false, true, &fs), timeQuery(c, "to", false, true, &fs)
	if err := fs.Err(); err != nil {
		fail(c, err)
		return
	}
	rows, more, err := usage.Events(c.Request.Context(), s.store, principal(c).Env, f, page)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]usageEventResponse, len(rows))
	for i, r := range rows {
		out[i] = toUsageEventResponse(r)
	}
	render(c, http.StatusOK, newList(out, more))
}

type usageSummaryRow struct {
	AccountID   string      `json:"account_id"`
	Product     string      `json:"product"`
	MetricName  string      `json:"metric_name"`
	Resolution  string      `json:"resolution"`
	PeriodStart string      `json:"period_start"`
	Value       json.Number `json:"value"`
}

func (s *Server) usageSummary(c *gin.Context) {
	if err := checkQuery(c); err != nil {
		fail(c, err)
		return
	}
	f := usage.SummaryFilter{Resolution: c.Query("resolution"), AccountID: c.Query("account_id"),
		Product: c.Query("product"), MetricName: c.Query("metric_name"), Limit: 1000}
	var fs apperr.Faults
	switch {
	case f.Resolution == "":
		fs.Missing("resolution")
	case !usage.ValidResolution(f.Resolution):
		fs.Invalid("resolution", "resolution must be one of minute, hour, day, week, month.")
	}
	if n, ok := limitQuery(c, 1000, &fs); ok {
		f.Limit = n
	}
	f.From, f.To = timeQuery(c, "from", false, true, &fs), timeQuery(c, "to", false, true, &fs)
	if err := fs.Err(); err != nil {
		fail(c, err)
		return
	}
	rows, more, err := usage.Summary(c.Request.Context(), s.store, principal(c).Env, f)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]usageSummaryRow, len(rows))
	for i, r := range rows {
		out[i] = usageSummaryRow{AccountID: r.AccountID, Product: r.Product, MetricName: r.MetricName,
			Resolution: r.Resolution, PeriodStart: r.PeriodStart.UTC().Format(time.RFC3339),
			Value: json.Number(decimal.Canonical(r.Value))}
	}
	render(c, http.StatusOK, newList(out, more))
}

package usage

import (
	"context"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// EventFilter narrows GET /v1/usage/events; empty fields do not filter. From is
// inclusive and To exclusive, on the metric's timestamp.
type EventFilter struct {
	AccountID, Product, MetricName, TransactionID string
	From, To                                      *time.Time
}

// SummaryFilter selects rollups of one resolution; From (inclusive) and To (exclusive)
// apply to period_start. Limit caps the rows returned.
type SummaryFilter struct {
	Resolution                     string
	AccountID, Product, MetricName string
	From, To                       *time.Time
	Limit                          int
}

// Events lists the environment's stored usage events, newest first.
func Events(ctx context.Context, st Store, env models.Env, f EventFilter, page store.Page) ([]models.UsageEvent, bool, error) {
	return st.UsageEvents(ctx, env, toEventQuery(f), page)
}

// Summary lists the environment's per-period rollups matching f.
func Summary(ctx context.Context, st Store, env models.Env, f SummaryFilter) ([]models.UsageRollup, bool, error) {
	return st.UsageSummary(ctx, env, toSummaryQuery(f))
}

// toEventQuery is f as the store's query parameters.
func toEventQuery(f EventFilter) store.UsageEventFilter {
	return store.UsageEventFilter{AccountID: f.AccountID, Product: f.Product, MetricName: f.MetricName,
		TransactionID: f.TransactionID, From: f.From, To: f.To}
}

// toSummaryQuery is f as the store's query parameters.
func toSummaryQuery(f SummaryFilter) store.UsageSummaryFilter {
	return store.UsageSummaryFilter{Resolution: f.Resolution, AccountID: f.AccountID, Product: f.Product,
		MetricName: f.MetricName, From: f.From, To: f.To, Limit: f.Limit}
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// UsageEventFilter narrows GET /v1/usage/events; empty fields do not filter. From is
// inclusive and To exclusive, on the metric's timestamp.
type UsageEventFilter struct {
	AccountID, Product, MetricName, TransactionID string
	From, To                                      *time.Time
}

// UsageEvents lists an environment's metric rows, newest first.
func (s *Store) UsageEvents(ctx context.Context, env Env, f UsageEventFilter, page Page) ([]models.UsageEvent, bool, error) {
	q := s.in(ctx, env)
	q = whereEq(q, "account_id", f.AccountID, "product", f.Product, "metric_name", f.MetricName)
	if f.TransactionID != "" {
		// Through the batch's unique index and the list index (a batch's rows all carry its
		// received_at as created_at) rather than one more index to maintain at ingest.
		batch := "(SELECT %s FROM usage_batches WHERE environment_id = ? AND transaction_id = ?)"
		q = q.Where("created_at = "+fmt.Sprintf(batch, "received_at")+" AND batch_seq = "+fmt.Sprintf(batch, "seq"),
			env.ID, f.TransactionID, env.ID, f.TransactionID)
	}
	q = whereRange(q, "timestamp", f.From, f.To)
	table, args := "usage_events", []any(nil)
	if s.dialect == "postgres" && f.AccountID == "" && f.TransactionID == "" && f.From != nil && f.To != nil &&
		time.Since(*f.To) > f.To.Sub(*f.From) {
		// A range that ended longer ago than it lasts: PostgreSQL, assuming matching rows
		// are spread evenly, walks the list index back from the newest row and filters,
		// reading every row newer than the range (seconds on 10M rows). Behind this fence
		// (OFFSET 0 keeps the subquery from being merged) it takes the range's rows from
		// usage_events_time and sorts only those. Same rows, same order.
		table = "(SELECT * FROM usage_events WHERE environment_id = ? AND timestamp >= ? AND timestamp < ? OFFSET 0) AS usage_events"
		args = []any{env.ID, *f.From, *f.To}
	}
	rows, more, err := paginate[models.UsageEvent](q, table, page, args...)
	if err != nil {
		return nil, false, fmt.Errorf("usage events: %w", err)
	}
	return rows, more, nil
}

// UsageSummaryFilter selects rollups of one resolution; From (inclusive) and To
// (exclusive) apply to period_start. Limit caps the rows returned.
type UsageSummaryFilter struct {
	Resolution                     string
	AccountID, Product, MetricName string
	From, To                       *time.Time
	Limit                          int
}

// UsageSummary reads rollups only, oldest period first; more tells whether rows beyond
// Limit matched.
func (s *Store) UsageSummary(ctx context.Context, env Env, f UsageSummaryFilter) (rows []models.UsageRollup, more bool, err error) {
	q := s.in(ctx, env).Where("resolution = ?", f.Resolution)
	q = whereEq(q, "account_id", f.AccountID, "product", f.Product, "metric_name", f.MetricName)
	q = whereRange(q, "period_start", f.From, f.To)
	err = q.Table("usage_rollups").Order("period_start, account_id, product, metric_name").Limit(f.Limit + 1).Find(&rows).Error
	if err != nil {
		return nil, false, fmt.Errorf("usage summary: %w", err)
	}
	if len(rows) > f.Limit {
		return rows[:f.Limit], true, nil
	}
	return rows, false, nil
}

// UsageCounts returns the number of batches, events and rollups of an environment (tests
// and operators use it to check that nothing was written twice).
func (s *Store) UsageCounts(ctx context.Context, env Env) (batches, events, rollups int64, err error) {
	for table, n := range map[string]*int64{"usage_batches": &batches, "usage_events": &events, "usage_rollups": &rollups} {
		if err := s.in(ctx, env).Table(table).Count(n).Error; err != nil {
			return 0, 0, 0, fmt.Errorf("count %s: %w", table, err)
		}
	}
	return batches, events, rollups, nil
}

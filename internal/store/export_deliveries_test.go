package store

import (
	"context"
	"slices"
	"time"

	"github.com/revops/revops/models"
)

// MigrateWithout applies every migration but the listed versions: a database as the
// release before them left it.
func (s *Store) MigrateWithout(ctx context.Context, skip ...int) ([]string, error) {
	return s.migrate(ctx, slices.DeleteFunc(slices.Clone(migrations), func(m migration) bool { return slices.Contains(skip, m.version) }))
}

// ExecForTest runs a statement of a test's setup.
func (s *Store) ExecForTest(ctx context.Context, sql string, args ...any) error {
	return s.db.WithContext(ctx).Exec(sql, args...).Error
}

// SummarizeEventForTest sets the event's status to the summary of its deliveries in SQL.
func (s *Store) SummarizeEventForTest(ctx context.Context, eventID string) error {
	return summarizeEvent(s.db.WithContext(ctx), eventID, time.Now().UTC())
}

// CountForTest counts the rows of table matching where.
func (s *Store) CountForTest(ctx context.Context, table, where string, arg any, n *int64) error {
	return s.db.WithContext(ctx).Table(table).Where(where, arg).Count(n).Error
}

// RecordDeliveryAttemptStepByStepForTest is RecordDeliveryAttempt as SQLite and the
// single-endpoint releases' attempts run it, and as every attempt ran on PostgreSQL
// before recordFanOutAttempt: the baseline of its benchmark.
func (s *Store) RecordDeliveryAttemptStepByStepForTest(ctx context.Context, env Env, a *models.DeliveryAttempt, deliveryStatus string) error {
	stampAttempt(a, env)
	return s.recordAttemptStepByStep(ctx, env, a, deliveryStatus, time.Now().UTC())
}

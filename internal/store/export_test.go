package store

// The store's test-only methods live here, compiled into this package's tests alone, so
// that no release can call them. Test-only methods that other packages' tests call
// (SeedAttempt, SetEventStatus, EventsForObject, DeliveryAttempts, UsageCounts) cannot:
// a _test file is not compiled into another package's test binary.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

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
func (s *Store) RecordDeliveryAttemptStepByStepForTest(ctx context.Context, env Env, a *models.DeliveryAttempt, ch AttemptChange) error {
	stampAttempt(a, env)
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, err := recordAttemptStepByStep(tx, s.dialect, env, a, ch, time.Now().UTC())
		return err
	})
}

// CountEvents counts an environment's events matching f.
func (s *Store) CountEvents(ctx context.Context, env Env, f EventFilter) (int, error) {
	var n int64
	if err := f.apply(s.in(ctx, env)).Model(&models.Event{}).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count events: %w", err)
	}
	return int(n), nil
}

// CountDeliveries counts the environment's deliveries matching f.
func (s *Store) CountDeliveries(ctx context.Context, env Env, f EventFilter) (int, error) {
	var n int64
	if err := deliveryQuery(s.db.WithContext(ctx), env, f).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count deliveries: %w", err)
	}
	return int(n), nil
}

// MarkReplayed is the previous releases' replay of one event, and markReplayed its
// body: no release calls them any more (replays go through replay.Deliveries), but
// their tests pin how a replay and a concurrent attempt's record serialise.
// MarkReplayed records the new run of a replayed event and puts the event back to
// pending, unless the new run already recorded an attempt (it may be that fast): then
// the status that attempt set stands. The row is locked first, in its own statement: an
// attempt being recorded holds that lock until it commits, and under READ COMMITTED
// only a statement begun after that commit sees the attempt (one UPDATE that waited for
// the lock would still judge EXISTS by its older snapshot and undo a delivered status).
func (s *Store) MarkReplayed(ctx context.Context, env Env, eventID, workflowID, runID string, at time.Time) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		lock := scope(tx, env).Model(&models.Event{}).Where("id = ?", eventID).Update("updated_at", at)
		if lock.Error != nil {
			return fmt.Errorf("mark event %s replayed: %w", eventID, lock.Error)
		}
		return markReplayed(tx, env, eventID, workflowID, runID, at)
	})
}

func markReplayed(tx *gorm.DB, env Env, eventID, workflowID, runID string, at time.Time) error {
	var n int64
	if err := scope(tx.Model(&models.WebhookDelivery{}), env).Where("event_id = ?", eventID).Count(&n).Error; err != nil {
		return fmt.Errorf("deliveries of %s: %w", eventID, err)
	}
	status := gorm.Expr("CASE WHEN EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.event_id = events.id AND a.run_id = ?) THEN status ELSE ? END",
		runID, models.EventPending)
	if n > 0 {
		// The single-endpoint releases' replay: every delivery goes again, unless the new
		// run already recorded an attempt; deliveries of deleted endpoints stay skipped.
		res := scope(tx.Model(&models.WebhookDelivery{}), env).
			Where("event_id = ? AND NOT (status = ? AND last_error = ?)", eventID, models.EventSkipped, models.DeliveryEndpointDeleted).
			Where("NOT EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.event_id = ? AND a.run_id = ?)", eventID, runID).
			Updates(map[string]any{"status": models.EventPending, "last_error": "", "updated_at": at})
		if res.Error != nil {
			return fmt.Errorf("replay deliveries of %s: %w", eventID, res.Error)
		}
		status = gorm.Expr(summarySQL)
	}
	return updateEvent(tx, env, eventID, map[string]any{
		"workflow_id":   workflowID,
		"run_id":        runID,
		"dispatched_at": gorm.Expr("COALESCE(dispatched_at, ?)", at),
		"updated_at":    at,
		"status":        status,
	}, "mark replayed")
}

// EventFilterIndexes are the indexes migration 70 adds (events_indexes.go), in its order.
var EventFilterIndexes = []string{"events_env_type", "events_env_status", "events_env_type_status"}

// IndexesForTest lists the names of table's indexes (both databases).
func (s *Store) IndexesForTest(ctx context.Context, table string) ([]string, error) {
	q := "SELECT indexname FROM pg_indexes WHERE tablename = ? ORDER BY 1"
	if s.dialect == "sqlite" {
		q = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY 1"
	}
	var names []string
	if err := s.db.WithContext(ctx).Raw(q, table).Scan(&names).Error; err != nil {
		return nil, fmt.Errorf("indexes of %s: %w", table, err)
	}
	return names, nil
}

// InsertEventsForTest writes event rows as they are, in batches (a test's seed).
func (s *Store) InsertEventsForTest(ctx context.Context, events []models.Event) error {
	return s.db.WithContext(ctx).CreateInBatches(events, 500).Error
}

// ExplainEvents runs Events(env, f, page) and returns the plan of its list query (the
// last statement it ran, the cursor's lookup before it): EXPLAIN, or with analyze
// EXPLAIN (ANALYZE, BUFFERS), on PostgreSQL; EXPLAIN QUERY PLAN on SQLite. One line per
// plan row. The statement is explained with its values inlined by GORM's logger (times
// to the millisecond): its plan, not necessarily its exact rows.
func (s *Store) ExplainEvents(ctx context.Context, env Env, f EventFilter, page Page, analyze bool) ([]string, error) {
	capture := &sqlCapture{}
	in := &Store{db: s.db.Session(&gorm.Session{Logger: capture}), dialect: s.dialect}
	if _, _, err := in.Events(ctx, env, f, page); err != nil {
		return nil, err
	}
	if capture.last == "" {
		return nil, fmt.Errorf("explain events: no statement captured")
	}
	db := s.db.WithContext(ctx)
	var lines []string
	switch {
	case s.dialect == "sqlite":
		var rows []struct {
			ID, Parent, Notused int
			Detail              string
		}
		if err := db.Raw("EXPLAIN QUERY PLAN " + capture.last).Scan(&rows).Error; err != nil {
			return nil, fmt.Errorf("explain events: %w", err)
		}
		for _, r := range rows {
			lines = append(lines, r.Detail)
		}
	case analyze:
		err := db.Raw("EXPLAIN (ANALYZE, BUFFERS) " + capture.last).Scan(&lines).Error
		if err != nil {
			return nil, fmt.Errorf("explain events: %w", err)
		}
	default:
		if err := db.Raw("EXPLAIN " + capture.last).Scan(&lines).Error; err != nil {
			return nil, fmt.Errorf("explain events: %w", err)
		}
	}
	return lines, nil
}

// sqlCapture is a GORM logger that keeps the last statement run, its values inlined.
type sqlCapture struct{ last string }

func (c *sqlCapture) LogMode(logger.LogLevel) logger.Interface { return c }
func (c *sqlCapture) Info(context.Context, string, ...any)     {}
func (c *sqlCapture) Warn(context.Context, string, ...any)     {}
func (c *sqlCapture) Error(context.Context, string, ...any)    {}
func (c *sqlCapture) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	c.last, _ = fc()
}

// ScanForTest scans the rows of a query into dest.
func (s *Store) ScanForTest(ctx context.Context, dest any, sql string, args ...any) error {
	return s.db.WithContext(ctx).Raw(sql, args...).Scan(dest).Error
}

// ClaimSQLForTest is the statement of a claim (ClaimStarts: $1 after, $2 environments,
// $3 events, $4 held events), for the claim's benchmark.
const ClaimSQLForTest = claimSQL

// DeliveriesForTest lists every delivery of the environment, by endpoint, object and
// sequence.
func (s *Store) DeliveriesForTest(ctx context.Context, envID string) ([]models.WebhookDelivery, error) {
	var ds []models.WebhookDelivery
	err := s.db.WithContext(ctx).Where("environment_id = ?", envID).Order("endpoint_id, object_id, sequence, id").Find(&ds).Error
	return ds, err
}

package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// A background job's row (a deleted endpoint's deletion, a deleted meter's purge, a
// backfilling meter, a running replay job) has its workflow started after the commit
// that wrote it; the sweeper lists the rows whose workflow was not started (the start
// failed), starts them again and marks them started.

// unstarted lists, ordered by order, up to limit rows of T that where selects: the
// sweeper's read of rows whose workflow was not started. what names the list in errors.
func unstarted[T any](ctx context.Context, db *gorm.DB, what, order string, limit int, where string, args ...any) ([]T, error) {
	var rows []T
	if err := db.WithContext(ctx).Where(where, args...).Order(order).Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return rows, nil
}

// markStarted sets column, when its workflow was started, of table's row whose key is
// id, unless it is set already. what names the row's job in errors.
func markStarted(ctx context.Context, db *gorm.DB, table, key, column, id string, at time.Time, what string) error {
	err := db.WithContext(ctx).Exec(`UPDATE `+table+` SET `+column+` = ? WHERE `+key+` = ? AND `+column+` IS NULL`,
		at.UTC(), id).Error
	if err != nil {
		return fmt.Errorf("mark %s %s started: %w", what, id, err)
	}
	return nil
}

// jobRows is a table whose row stands for a deleted endpoint or meter while its job
// ends what it left (endpoint_deletions, meter_purges): keyed by the subject's id,
// swept until its workflow is started (started_at), removed last.
type jobRows[T any] struct {
	table, key string // the table, and its key: the subject's id
	what       string // a row's job, in errors: "deletion of webhook endpoint"
	list       string // the sweeper's list, in errors: "unstarted endpoint deletions"
}

// unstarted lists the rows recorded before before whose workflow was not started,
// oldest first.
func (j jobRows[T]) unstarted(ctx context.Context, db *gorm.DB, before time.Time, limit int) ([]T, error) {
	return unstarted[T](ctx, db, j.list, "created_at", limit, "started_at IS NULL AND created_at < ?", before.UTC())
}

// markStarted records that id's workflow was started.
func (j jobRows[T]) markStarted(ctx context.Context, db *gorm.DB, id string, at time.Time) error {
	return markStarted(ctx, db, j.table, j.key, "started_at", id, at, j.what)
}

// end removes id's row once its job is done: its slot among the environment's is free
// again. Removing a row already gone is no error (a retried activity).
func (j jobRows[T]) end(ctx context.Context, db *gorm.DB, id string) error {
	if err := db.WithContext(ctx).Exec(`DELETE FROM `+j.table+` WHERE `+j.key+` = ?`, id).Error; err != nil {
		return fmt.Errorf("end %s %s: %w", j.what, id, err)
	}
	return nil
}

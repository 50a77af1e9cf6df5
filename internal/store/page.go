package store

import (
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// Page asks for one page of a list (models.Page).
type Page = models.Page

// ErrBadCursor is a starting_after that names no object of the list asked for.
var ErrBadCursor = errors.New("starting_after is not an object of this list")

// paginate runs q (already scoped and filtered, on table) newest first by
// (created_at, id), after the cursor, and tells whether more rows follow. table may be a
// derived table named as the table, with its parameters in args.
func paginate[T any](q *gorm.DB, table string, page Page, args ...any) ([]T, bool, error) {
	q = q.Session(&gorm.Session{}) // reusable: the cursor lookup must not leak into the list query
	if page.StartingAfter != "" {
		var cursor struct{ CreatedAt time.Time }
		err := q.Table(table, args...).Select("created_at").Where("id = ?", page.StartingAfter).Take(&cursor).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, false, apperr.Invalid(ErrBadCursor, apperr.CodeParameterInvalid, "starting_after",
				"starting_after %q is not an object of this list.", page.StartingAfter)
		}
		if err != nil {
			return nil, false, fmt.Errorf("load cursor: %w", err)
		}
		// created_at <= cursor is implied by the rest; said on its own it bounds the index
		// scan, which the OR alone does not: without it a page deep in a large table read
		// every newer row (docs/benchmarks.md, "Scale").
		q = q.Where("created_at <= ? AND ((created_at < ?) OR (created_at = ? AND id < ?))",
			cursor.CreatedAt, cursor.CreatedAt, cursor.CreatedAt, page.StartingAfter)
	}
	var rows []T
	if err := q.Table(table, args...).Order("created_at DESC, id DESC").Limit(page.Limit + 1).Find(&rows).Error; err != nil {
		return nil, false, fmt.Errorf("list %s: %w", table, err)
	}
	if len(rows) > page.Limit {
		return rows[:page.Limit], true, nil
	}
	return rows, false, nil
}

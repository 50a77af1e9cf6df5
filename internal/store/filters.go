package store

import (
	"time"

	"gorm.io/gorm"
)

// whereEq adds "column = value" for every (column, value) pair whose value is set: the
// optional equality filters of list queries. Pairs keep their order, so the SQL text is
// stable (statement caches reuse it).
func whereEq(q *gorm.DB, pairs ...string) *gorm.DB {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q = q.Where(pairs[i]+" = ?", pairs[i+1])
		}
	}
	return q
}

// whereRange keeps rows whose column lies in [from, to); a nil bound is open.
func whereRange(q *gorm.DB, column string, from, to *time.Time) *gorm.DB {
	if from != nil {
		q = q.Where(column+" >= ?", *from)
	}
	if to != nil {
		q = q.Where(column+" < ?", *to)
	}
	return q
}

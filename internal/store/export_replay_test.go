package store

import (
	"strings"

	"gorm.io/gorm"
)

// OnReplayCountForTest calls fn each time the store counts the deliveries a new bulk
// replay job matches (countReplayMatches), whatever the transaction: a GORM callback on
// every query statement, picking the count of webhook_deliveries.
func (s *Store) OnReplayCountForTest(fn func()) error {
	return s.db.Callback().Query().After("gorm:query").Register("test:replay_count", func(db *gorm.DB) {
		sql := strings.ToLower(db.Statement.SQL.String())
		if strings.Contains(sql, "count(") && strings.Contains(sql, "from webhook_deliveries d") {
			fn()
		}
	})
}

// ReplayJobsLockForTest is the statement that takes lockReplayJobs's lock of env on
// PostgreSQL, with its argument, for a test to hold it from a transaction of its own.
func ReplayJobsLockForTest(env Env) (string, string) {
	return "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", "replay_jobs:" + env.ID
}

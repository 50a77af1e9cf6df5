package usage_test

import (
	"strconv"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// seeded is a migrated store holding one organization, and one of its environments.
type seeded struct {
	st  *store.Store
	env models.Env
	url string
}

// bothDatabases is testdb.Both in this package's words.
func bothDatabases(t *testing.T, envName string) map[string]seeded {
	t.Helper()
	out := map[string]seeded{}
	for name, s := range testdb.Both(t, envName) {
		out[name] = seeded{st: s.Store, env: s.Env, url: s.URL}
	}
	return out
}

// usageWrite is a one-metric batch of account a's seats on day at.
func usageWrite(tx, mode, hash, value string, at time.Time) store.UsageWrite {
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	return store.UsageWrite{
		Batch: models.UsageBatch{TransactionID: tx, Mode: mode, BodyHash: hash, Response: `{}`, MetricsCount: 1, ReceivedAt: at},
		Events: []models.UsageEvent{{ID: tx + "-0", AccountID: "a", Product: "p", MetricName: "seats",
			MetricValue: value, MetricResolution: "day", Metadata: `{"k":1}`, Timestamp: at}},
		Rollups: []models.UsageRollup{{AccountID: "a", Product: "p", MetricName: "seats", Resolution: "day",
			PeriodStart: day, Value: value}},
	}
}

// numDiffer reports whether two decimal texts differ ("4" and "4.0" are equal: SQLite
// may say either).
func numDiffer(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 != nil || err2 != nil || x != y
}

// openRaw is testdb.Raw.
func openRaw(t *testing.T, dialect, url string) *gorm.DB { return testdb.Raw(t, dialect, url) }

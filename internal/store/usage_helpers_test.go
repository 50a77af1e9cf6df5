package store_test

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

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

// openRaw is testdb.Raw.
func openRaw(t *testing.T, dialect, url string) *gorm.DB { return testdb.Raw(t, dialect, url) }

package store_test

import (
	"testing"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/testkit/testdb"
)

// usageWrite is testdb.UsageWrite.
var usageWrite = testdb.UsageWrite

// openRaw is testdb.Raw.
func openRaw(t *testing.T, dialect, url string) *gorm.DB { return testdb.Raw(t, dialect, url) }

package usage_test

import (
	"strconv"
	"testing"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/testkit/testdb"
)

// usageWrite is testdb.UsageWrite.
var usageWrite = testdb.UsageWrite

// numDiffer reports whether two decimal texts differ ("4" and "4.0" are equal: SQLite
// may say either).
func numDiffer(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 != nil || err2 != nil || x != y
}

// openRaw is testdb.Raw.
func openRaw(t *testing.T, dialect, url string) *gorm.DB { return testdb.Raw(t, dialect, url) }

package usage_test

import (
	"strconv"
	"testing"

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

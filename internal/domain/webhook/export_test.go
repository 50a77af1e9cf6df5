package webhook

import (
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// SeededForTest is a migrated store on a fresh database with one environment
// (testdb.Seeded).
type SeededForTest struct {
	Store *store.Store
	Env   models.Env
}

// BothDatabasesForTest is testdb.Both for this package's own tests. testdb imports this
// package (it wires the fan-out into every store it opens), so a test of package webhook
// cannot import it: db_export_test.go, a file of package webhook_test in the same test
// binary, sets it.
var BothDatabasesForTest func(t *testing.T, envName string) map[string]SeededForTest

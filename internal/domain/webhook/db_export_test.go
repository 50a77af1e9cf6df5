package webhook_test

import (
	"testing"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/testkit/testdb"
)

func init() {
	webhook.BothDatabasesForTest = func(t *testing.T, envName string) map[string]webhook.SeededForTest {
		out := map[string]webhook.SeededForTest{}
		for name, db := range testdb.Both(t, envName) {
			out[name] = webhook.SeededForTest{Store: db.Store, Env: db.Env}
		}
		return out
	}
}

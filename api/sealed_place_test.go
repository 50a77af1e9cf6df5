package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/testkit/syncbuf"
)

// CONTRACT §25 (issue 41): whoever can write the database but holds no key copies tenant
// B's sealed signing secret into tenant A's endpoint row, then asks for A's secret with
// A's key: the secret does not open there, so the answer is an error that shows neither
// B's secret nor its sealed text, and neither does any log line; B's endpoint still reads.
func TestCopiedSecretIsNotShownToAnotherTenant(t *testing.T) {
	for _, dbName := range []string{"postgres", "sqlite"} {
		t.Run(dbName, func(t *testing.T) {
			logs := &syncbuf.Buffer{}
			h := newHarnessOn(t, dbName, func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true }, capturingLogs(logs))
			skA, skB := h.key[skSandbox], h.key["secret live"]
			create := func(key string) (id, secret string) {
				t.Helper()
				r := h.do("POST", "/v1/webhook_endpoints", key, map[string]any{"url": "https://127.0.0.1:9443/hook"})
				if r.Status != http.StatusCreated {
					t.Fatalf("create: %d %s", r.Status, r.Body)
				}
				ep := r.json(t)
				return ep["id"].(string), ep["secret"].(string)
			}
			idA, _ := create(skA)
			idB, secretB := create(skB)
			var sealedB string
			db := rawDB(t, h)
			if err := db.Raw(`SELECT secret FROM webhook_endpoints WHERE id = ?`, idB).Scan(&sealedB).Error; err != nil || sealedB == "" {
				t.Fatalf("B's stored secret: %q, %v", sealedB, err)
			}
			if err := db.Exec(`UPDATE webhook_endpoints SET secret = ? WHERE id = ?`, sealedB, idA).Error; err != nil {
				t.Fatal(err)
			}

			r := h.do("GET", "/v1/webhook_endpoints/"+idA+"/secret", skA, nil)
			if r.Status < 500 || r.errorCode(t) == "" {
				t.Fatalf("A's secret after the copy: %d %s", r.Status, r.Body)
			}
			for _, s := range []string{secretB, sealedB, secretB[len("whsec_"):]} {
				if strings.Contains(string(r.Body), s) || strings.Contains(logs.String(), s) {
					t.Fatalf("B's secret shown to A (answer %s)", r.Body)
				}
			}
			if !strings.Contains(logs.String(), "webhook_endpoints.secret of row") || !strings.Contains(logs.String(), idA) {
				t.Errorf("no log line names the row whose secret does not open: %s", logs.String())
			}
			if got := h.do("GET", "/v1/webhook_endpoints/"+idB+"/secret", skB, nil); got.Status != http.StatusOK || got.json(t)["secret"] != secretB {
				t.Fatalf("B's own secret: %d %s", got.Status, got.Body)
			}
		})
	}
}

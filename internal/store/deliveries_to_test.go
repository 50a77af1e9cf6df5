package store_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// The Deliveries page filtered by one endpoint (CONTRACT §23) pages that endpoint's
// deliveries (store.DeliveriesTo): each page is one index range, read in order and
// stopped after the page, whatever the endpoint's share of the events — one on every
// event, one on one in a hundred, one whose deliveries are all a month old (which an
// EXISTS filter on the events walks the whole month for), one with none — alone
// (migration 110) and with a status (webhook_deliveries_env_endpoint). PostgreSQL: the
// plans are the production ones; SQLite serves the dev shape.
func TestDeliveriesToUseIndexes(t *testing.T) {
	ctx := context.Background()
	db, ok := bothDatabases(t, models.EnvSandbox)["postgres"]
	if !ok {
		t.Skip("PostgreSQL only")
	}
	st, env := db.st, db.env
	now := time.Now().UTC().Truncate(time.Microsecond)
	seedFilterEvents(t, st, env, 6_000, now)
	// Object ids are obj-0 … obj-1999, events spread over 30 days, oldest first.
	for _, seed := range []struct{ endpoint, prefix, where string }{
		{"ep-all", "a-", ""},
		{"ep-rare", "r-", " AND object_id LIKE '%00'"},
		{"ep-old", "o-", " AND created_at < " + "(SELECT MIN(created_at) FROM events) + INTERVAL '1 day'"},
	} {
		if err := st.ExecForTest(ctx, `INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status,
			retry_initial_interval_ms, retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, created_at, updated_at)
			SELECT ? || id, id, environment_id, ?, status, 1000, 1, 1000, 6, created_at, updated_at FROM events
			WHERE status <> 'skipped'`+seed.where, seed.prefix, seed.endpoint); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.ExecForTest(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	const page = 25
	rowsRead := regexp.MustCompile(`Index Scan Backward using (\S+) on webhook_deliveries .*actual time=\S+ rows=(\d+) loops=1`)
	removed := regexp.MustCompile(`Rows Removed by Filter: (\d+)`)
	for _, c := range []struct{ endpoint, status, index string }{
		// Every delivery is ep-all's: walking the environment's deliveries in order is as
		// short, and the planner may take either.
		{"ep-all", "", "webhook_deliveries_env_endpoint_created|webhook_deliveries_env_created"},
		{"ep-rare", "", "webhook_deliveries_env_endpoint_created"},
		{"ep-old", "", "webhook_deliveries_env_endpoint_created"},
		{"ep-none", "", "webhook_deliveries_env_endpoint_created"},
		{"ep-all", models.EventFailed, "webhook_deliveries_env_endpoint"},
		{"ep-rare", models.EventDelivered, "webhook_deliveries_env_endpoint"},
	} {
		plan, err := st.ExplainDeliveriesTo(ctx, env, c.endpoint, c.status, store.Page{Limit: page})
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		t.Logf("%s %s:\n%s", c.endpoint, c.status, text)
		m := rowsRead.FindStringSubmatch(text)
		if m == nil || !slices.Contains(strings.Split(c.index, "|"), m[1]) || strings.Contains(text, "Sort") {
			t.Errorf("%s %s: the plan does not read %s in order:\n%s", c.endpoint, c.status, c.index, text)
			continue
		}
		n, _ := strconv.Atoi(m[2])
		if r := removed.FindStringSubmatch(text); r != nil {
			skipped, _ := strconv.Atoi(r[1])
			n += skipped
		}
		if n > page+1 {
			t.Errorf("%s %s: %d deliveries read for a page of %d", c.endpoint, c.status, n, page)
		}
	}
}

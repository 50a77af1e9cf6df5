package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A from/to list returns the same rows in the same order whichever plan serves it: on
// PostgreSQL a range that ended longer ago than it lasts is read through a fenced
// subquery (usage_query.go). Rows are received over 12 days, some back-dated; every
// range is paged through with a small limit and compared with a filter written in Go.
func TestUsageEventsRangePaging(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		st, env := db.st, db.env
		now := time.Now().UTC().Truncate(time.Microsecond)
		var all []models.UsageEvent
		for b := range 48 {
			at := now.Add(-time.Duration(48-b) * 6 * time.Hour)
			w := store.UsageWrite{Batch: models.UsageBatch{TransactionID: fmt.Sprint("tx", b), Mode: "increment",
				BodyHash: fmt.Sprint(b), Response: `{}`, MetricsCount: 5, ReceivedAt: at},
				Rollups: []models.UsageRollup{{AccountID: "a0", Product: "p", MetricName: "m", Resolution: "hour",
					PeriodStart: at.Truncate(time.Hour), Value: "5"}}}
			for i := range 5 {
				ts := at.Add(-time.Duration(i*i) * 3 * time.Hour) // up to 48 h late
				e := models.UsageEvent{ID: uuid.Must(uuid.NewV7()).String(), AccountID: fmt.Sprint("a", i%2),
					Product: "p", MetricName: fmt.Sprint("m", b%3), MetricValue: "1", MetricResolution: "hour",
					Metadata: `{}`, Timestamp: ts}
				w.Events = append(w.Events, e)
				e.CreatedAt = at
				all = append(all, e)
			}
			if _, err := st.WriteUsage(ctx, env, w); err != nil {
				t.Fatal(err)
			}
		}
		slices.SortFunc(all, func(a, b models.UsageEvent) int {
			if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		day := 24 * time.Hour
		for _, r := range []struct {
			from, to time.Duration // before now
			metric   string
		}{
			{10 * day, 9 * day, ""},                      // ended long ago: the fenced plan
			{5*day + 2*time.Hour, 5*day - time.Hour, ""}, // three hours, long ago
			{8 * day, 7 * day, "m1"},                     // with a filter on top
			{2 * day, 0, ""},                             // recent: the list index
			{12 * day, time.Hour, ""},                    // long and recent
		} {
			from, to := now.Add(-r.from), now.Add(-r.to)
			var want []string
			for _, e := range all {
				if !e.Timestamp.Before(from) && e.Timestamp.Before(to) && (r.metric == "" || e.MetricName == r.metric) {
					want = append(want, e.ID)
				}
			}
			var got []string
			page := store.Page{Limit: 3}
			for {
				rows, more, err := st.UsageEvents(ctx, env, store.UsageEventFilter{MetricName: r.metric, From: &from, To: &to}, page)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range rows {
					got = append(got, e.ID)
				}
				if !more {
					break
				}
				page.StartingAfter = rows[len(rows)-1].ID
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("range %v..%v %q: got %d rows %v, want %d %v", r.from, r.to, r.metric, len(got), got, len(want), want)
			}
		}
	})
}

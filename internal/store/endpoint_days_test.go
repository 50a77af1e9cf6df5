package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// TestEndpointDeliveryDays: one query counts each endpoint's delivered and failed
// deliveries per UTC day over the last days, on both databases; other statuses, older
// deliveries and other endpoints' rows stay apart.
func TestEndpointDeliveryDays(t *testing.T) {
	now := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	today := store.DayStart(now)
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a := newEndpoint(t, db, "https://a.example/hook", nil, true)
			b := newEndpoint(t, db, "https://b.example/hook", nil, true)
			// Each row: endpoint, created at, final status.
			for _, r := range []struct {
				ep     models.WebhookEndpoint
				at     time.Time
				status string
			}{
				{a, today.Add(10 * time.Hour), models.EventDelivered}, // today, before now
				{a, today.Add(time.Minute), models.EventDelivered},
				{a, today, models.EventFailed},                                     // midnight is today's
				{a, today.Add(-time.Nanosecond * 1000), models.EventFailed},        // yesterday's last microsecond
				{a, today.AddDate(0, 0, -6), models.EventDelivered},                // the oldest day shown
				{a, today.AddDate(0, 0, -6).Add(-time.Second), models.EventFailed}, // before it: not counted
				{a, today.AddDate(0, 0, -3), models.EventRetrying},                 // no outcome yet
				{a, today.AddDate(0, 0, -3), models.EventSkipped},                  // not judged
				{b, today.AddDate(0, 0, -2), models.EventFailed},
			} {
				ev := newAccountEvent(t, db)
				d := deliveriesByEndpoint(t, db, ev.ID)[r.ep.ID]
				if err := db.st.ExecForTest(ctx, "UPDATE webhook_deliveries SET created_at = ?, status = ? WHERE id = ?", r.at, r.status, d.ID); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := db.st.EndpointDeliveryDays(ctx, db.env, now, 7)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				who := "a"
				if r.EndpointID == b.ID {
					who = "b"
				}
				got = append(got, who+" "+string(rune('0'+r.Day))+" "+r.Status+" "+string(rune('0'+r.N)))
			}
			slices.Sort(got)
			want := []string{"a 0 delivered 1", "a 5 failed 1", "a 6 delivered 2", "a 6 failed 1", "b 4 failed 1"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("counts\n got %v\nwant %v", got, want)
			}
		})
	}
}

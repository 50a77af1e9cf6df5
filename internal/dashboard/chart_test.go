package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// TestBuildCharts: the store's grouped counts become per-day delivered/failed bars scaled
// to the week's peak, totals and a success rate, for every endpoint listed.
func TestBuildCharts(t *testing.T) {
	now := time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC) // a Monday
	row := func(ep string, day int, status string, n int) store.EndpointDeliveryCount {
		return store.EndpointDeliveryCount{EndpointID: ep, Day: day, Status: status, N: n}
	}
	for _, tc := range []struct {
		name      string
		rows      []store.EndpointDeliveryCount
		delivered string // per day, "d/f" joined by spaces
		heights   string // bar heights per day, "d/f"
		rate      string
	}{
		{"no deliveries", nil,
			"0/0 0/0 0/0 0/0 0/0 0/0 0/0", "0/0 0/0 0/0 0/0 0/0 0/0 0/0", "—"},
		{"all delivered today",
			[]store.EndpointDeliveryCount{row("a", 6, models.EventDelivered, 4)},
			"0/0 0/0 0/0 0/0 0/0 0/0 4/0", "0/0 0/0 0/0 0/0 0/0 0/0 40/0", "100 %"},
		{"mixed, scaled to the peak",
			[]store.EndpointDeliveryCount{row("a", 0, models.EventDelivered, 10), row("a", 0, models.EventFailed, 5),
				row("a", 3, models.EventFailed, 1)},
			"10/5 0/0 0/0 0/1 0/0 0/0 0/0", "40/20 0/0 0/0 0/4 0/0 0/0 0/0", "62.5 %"},
		{"a tiny count stays visible",
			[]store.EndpointDeliveryCount{row("a", 1, models.EventDelivered, 999), row("a", 1, models.EventFailed, 1)},
			"0/0 999/1 0/0 0/0 0/0 0/0 0/0", "0/0 40/1 0/0 0/0 0/0 0/0 0/0", "99.9 %"},
		{"other endpoints, statuses and days are ignored",
			[]store.EndpointDeliveryCount{row("b", 2, models.EventFailed, 3), row("a", 2, models.EventRetrying, 3),
				row("a", 7, models.EventDelivered, 3), row("a", -1, models.EventDelivered, 3), row("a", 2, models.EventDelivered, 1)},
			"0/0 0/0 1/0 0/0 0/0 0/0 0/0", "0/0 0/0 40/0 0/0 0/0 0/0 0/0", "100 %"},
		{"all failed",
			[]store.EndpointDeliveryCount{row("a", 5, models.EventFailed, 2), row("a", 6, models.EventFailed, 1)},
			"0/0 0/0 0/0 0/0 0/0 0/2 0/1", "0/0 0/0 0/0 0/0 0/0 0/40 0/20", "0 %"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, ok := buildCharts(tc.rows, []string{"a"}, now, chartDays)["a"]
			if !ok {
				t.Fatal("no chart for a listed endpoint")
			}
			var counts, heights []string
			for _, d := range ch.Days {
				counts = append(counts, fmt.Sprintf("%d/%d", d.Delivered.N, d.Failed.N))
				heights = append(heights, fmt.Sprintf("%d/%d", d.Delivered.H, d.Failed.H))
				for _, b := range []chartBar{d.Delivered, d.Failed} {
					if b.Y+b.H != chartBarsTop+chartBarsH || b.X+b.W > ch.Width {
						t.Errorf("bar %+v leaves the chart's baseline or width", b)
					}
				}
			}
			if got := strings.Join(counts, " "); got != tc.delivered {
				t.Errorf("counts %s, want %s", got, tc.delivered)
			}
			if got := strings.Join(heights, " "); got != tc.heights {
				t.Errorf("heights %s, want %s", got, tc.heights)
			}
			if ch.Rate != tc.rate {
				t.Errorf("rate %q, want %q", ch.Rate, tc.rate)
			}
			if ch.Days[0].Date != "2026-11-17" || ch.Days[6].Date != "2026-11-23" || ch.Days[6].Label != "Mon" {
				t.Errorf("days %s (%s) … %s (%s), want 2026-11-17 … 2026-11-23, Mon", ch.Days[0].Date, ch.Days[0].Label, ch.Days[6].Date, ch.Days[6].Label)
			}
		})
	}
}

package dashboard_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/testkit/clocktest"
	"github.com/revops/revops/models"
)

// demoUsage is a month of plausible usage for the Usage page's screenshot: eight
// accounts of different sizes, most in one region and some in two, with a weekly rhythm
// and growth, the same on every run (a fixed seed).
func demoUsage(daysBack int) [][]usageRow {
	accounts := []struct {
		id      string
		regions []any
		size    float64
	}{
		{"acct_globex", []any{"eu", "us"}, 900}, {"acct_initech", []any{"us"}, 650}, {"acct_umbrella", []any{"eu"}, 520},
		{"acct_hooli", []any{"us", "apac"}, 400}, {"acct_stark", []any{"us"}, 260}, {"acct_wayne", []any{"eu"}, 120},
		{"acct_acme", []any{"apac"}, 80}, {"acct_soylent", []any{nil}, 40},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var batches [][]usageRow
	for ago := daysBack; ago >= 0; ago-- {
		var batch []usageRow
		weekday := time.Now().UTC().AddDate(0, 0, -ago).Weekday()
		for _, a := range accounts {
			for i, region := range a.regions {
				calls := a.size * (1 + 0.02*float64(daysBack-ago)) / float64(i+1)
				if weekday == time.Saturday || weekday == time.Sunday {
					calls *= 0.45
				}
				calls *= 0.85 + 0.3*rng.Float64()
				for u := range 1 + rng.IntN(4) {
					batch = append(batch, usageRow{a.id, region, fmt.Sprintf("%s_u%d", a.id, u), fmt.Sprintf("%d", int(calls)/(u+1)), ago})
				}
			}
		}
		batches = append(batches, batch)
	}
	return batches
}

func TestBrowserUsage(t *testing.T) {
	// Usage of today, ingested, then shown by the page on its clock: one UTC day.
	clocktest.AwayFromBoundary(t, 24*time.Hour, 2*time.Minute, 0)
	s := newSite(t)
	u := s.newUser("Acme Corp", "owner@acme.test")
	env := s.sandbox(u.orgID)
	ctx := newBrowser(t)
	base := s.srv.URL
	key, err := s.keys.Create(t.Context(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	calls := s.createMeter(env, meters.Definition{Key: "api-calls", Description: "API calls, billed per thousand", MetricName: "api_calls",
		Aggregation: models.AggSum, GroupBy: []string{"region"}})
	// A usage alert (CONTRACT §24), defined before the usage: today's batch crosses it and
	// the consumer's transaction records the firing.
	alert := s.createAlert(key.Plain, calls.Key, map[string]any{"threshold": "1000", "window": "day", "account_id": "acct_globex",
		"group": map[string]any{"region": "eu"}, "description": "Globex EU daily budget"})
	s.createMeter(env, meters.Definition{Key: "active-users", Description: "Distinct users a day", MetricName: "api_calls",
		Product: "api", Aggregation: models.AggUniqueCount, ValueKey: "user_id", GroupBy: []string{"region"}})
	batches := demoUsage(29)
	for i, b := range batches[:len(batches)-1] {
		s.ingest(key.Plain, fmt.Sprintf("day-%d", i), b...)
	}
	// Created once a month of usage was accepted: backfilling, it counts today's batch
	// at once and the older ones as its backfill runs (there is no worker here).
	s.createMeter(env, meters.Definition{Key: "requests", Description: "Requests, for the usage report", MetricName: "api_calls",
		Aggregation: models.AggCount})
	s.ingest(key.Plain, "today", batches[len(batches)-1]...)

	browserLogin(t, ctx, base, u)
	run(t, ctx, "switch to Usage",
		chromedp.Click(css(`nav.menu a[href="/dashboard/usage"]`)),
		chromedp.WaitVisible(css(`section[data-meter-key="api-calls"] svg.usage-chart rect.seg.rest`)),
		chromedp.WaitVisible(css(`section[data-meter-key="requests"] .state-backfilling`)),
		chromedp.WaitVisible(css(`section[data-meter-key="api-calls"] .over-account[data-account-id="acct_globex"]`)),
		screenshot("usage"),
	)
	legend := value(t, ctx, "api-calls' legend", chromedp.Text(css(`section[data-meter-key="api-calls"] ul.legend`)))
	if !strings.Contains(legend, "acct_globex · region=eu") || !strings.Contains(legend, "the rest (") {
		t.Fatalf("api-calls' legend %q", legend)
	}
	if n := value(t, ctx, "series", chromedp.Evaluate[int](`document.querySelectorAll('section[data-meter-key="api-calls"] ul.legend li').length`)); n != 6 {
		t.Fatalf("%d series in api-calls' legend, want 6", n)
	}
	over := value(t, ctx, "the alert", chromedp.Text(css(`section[data-meter-key="api-calls"] tr.alert[data-alert-id="`+alert.ID+`"]`)))
	for _, want := range []string{"1000", "day", "acct_globex", "region=eu", "Globex EU daily budget", "over"} {
		if !strings.Contains(over, want) {
			t.Fatalf("the alert's row %q misses %q", over, want)
		}
	}
	if cur := value(t, ctx, "menu", chromedp.Text(css(`nav.menu a[aria-current="page"]`))); cur != "Usage" {
		t.Fatalf("current menu entry %q", cur)
	}
	run(t, ctx, "switch to live: the Usage page, without sandbox's meters",
		chromedp.Click(css(`button.seg-live`)),
		chromedp.WaitVisible(css(`.live-banner`)),
		chromedp.WaitVisible(css(`#no-meters`)),
	)
	if loc := value(t, ctx, "location", chromedp.Location()); loc != base+"/dashboard/usage" {
		t.Fatalf("the switch went to %s, want back to the Usage page", loc)
	}
}

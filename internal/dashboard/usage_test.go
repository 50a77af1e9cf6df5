package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/clocktest"
	"github.com/revops/revops/models"
)

// usageRow is one metric of a usage batch, days before today (UTC).
type usageRow struct {
	account string
	region  any // nil: no region in the metadata
	user    string
	value   string // a JSON number
	daysAgo int
}

// ingest sends rows as one usage batch through the API, then runs the meters' consumer
// (the harness has no worker) so that every meter counts them.
func (s *site) ingest(key, txn string, rows ...usageRow) {
	s.t.Helper()
	today := store.DayStart(time.Now())
	var metrics []map[string]any
	for _, r := range rows {
		meta := map[string]any{"user_id": r.user}
		if r.region != nil {
			meta["region"] = r.region
		}
		metrics = append(metrics, map[string]any{"account_id": r.account, "product": "api", "metric_name": "api_calls",
			"metric_value": json.Number(r.value), "metric_resolution": "minute", "metadata": meta,
			"timestamp": today.AddDate(0, 0, -r.daysAgo).Add(time.Minute).Format(time.RFC3339)})
	}
	b, _ := json.Marshal(map[string]any{"transaction_id": txn, "mode": "increment", "event_metrics": metrics})
	req, _ := http.NewRequest("POST", s.srv.URL+"/v1/usage/events", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		s.t.Fatalf("ingest %s: %d", txn, res.StatusCode)
	}
	if _, err := meterstest.Consume(context.Background(), s.store); err != nil {
		s.t.Fatal(err)
	}
}

// createMeter defines a meter the way POST /v1/meters does.
func (s *site) createMeter(env models.Env, d meters.Definition) models.Meter {
	s.t.Helper()
	m, err := meters.Create(context.Background(), s.store, env, d, time.Now(), idempotency.Reply[meters.Object]{})
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// sevenGroups is usage for seven groups (account and region) of api_calls: five large
// ones today, and two small ones over three days that make "the rest".
var sevenGroups = []usageRow{
	{"acct_1", "eu", "u1", "700", 0},
	{"acct_1", "us", "u1", "600", 0},
	{"acct_2", "eu", "u1", "500", 0},
	{"acct_3", nil, "u1", "400", 0},
	{"acct_4", "eu", "u1", "300", 0},
	{"acct_6", "eu", "u1", "7", 0}, {"acct_6", "eu", "u2", "5", 0}, {"acct_6", "eu", "u1", "8", 1},
	{"acct_7", "us", "u3", "5.25", 0}, {"acct_7", "us", "u3", "4.75", 2},
}

var (
	segment     = regexp.MustCompile(`<rect class="seg (\w+)"[^>]*data-value="([^"]+)"><title>([0-9-]+) · ([^<]+): `)
	legendEntry = regexp.MustCompile(`<li class="series[^"]*" data-class="(\w+)"><span class="key \w+"></span> <span class="series-label">([^<]+)</span>(?: <small class="series-total" data-total="([^"]+)")?`)
)

// The Usage page lists the environment's meters, each with its top five groups and the
// rest summed exactly, day by day; sandbox and live apart; on both databases.
func TestUsagePage(t *testing.T) {
	for name, s := range bothSites(t) {
		t.Run(name, func(t *testing.T) {
			// Usage of today, ingested, then charted by the page on its clock: one UTC day.
			clocktest.AwayFromBoundary(t, 24*time.Hour, 30*time.Second, 0)
			ctx := context.Background()
			u := s.newUser("Acme", "owner@acme.test")
			env := s.sandbox(u.orgID)
			c := s.client()
			if p := c.get("/dashboard/usage"); p.status != http.StatusSeeOther || p.location != "/dashboard/login" {
				t.Fatalf("without a session: %d → %q", p.status, p.location)
			}
			c.mustLogin(u)
			p := c.get("/dashboard/usage")
			for _, want := range []string{`href="/dashboard/usage" aria-current="page"`, `id="no-meters"`, "POST /v1/meters", "docs/meters.md"} {
				if p.status != http.StatusOK || !strings.Contains(p.body, want) {
					t.Fatalf("the empty page (%d) misses %q: %.3000s", p.status, want, p.body)
				}
			}

			s.createMeter(env, meters.Definition{Key: "api-calls", Description: "API calls by region", MetricName: "api_calls",
				Aggregation: models.AggSum, GroupBy: []string{"region"}})
			s.createMeter(env, meters.Definition{Key: "active-users", MetricName: "api_calls", Product: "api",
				Aggregation: models.AggUniqueCount, ValueKey: "user_id", GroupBy: []string{"region"}})
			key, err := s.keys.Create(ctx, u.orgID, "sandbox", "secret")
			if err != nil {
				t.Fatal(err)
			}
			s.ingest(key.Plain, "t1", sevenGroups...)
			// Created after usage was accepted, this one has rows to backfill.
			s.createMeter(env, meters.Definition{Key: "late", MetricName: "api_calls", Aggregation: models.AggCount})

			page := c.get("/dashboard/usage")
			if page.status != http.StatusOK {
				t.Fatalf("usage page: %d %.3000s", page.status, page.body)
			}
			today := store.DayStart(time.Now()).Format("2006-01-02")
			yesterday := store.DayStart(time.Now()).AddDate(0, 0, -1).Format("2006-01-02")
			twoDaysAgo := store.DayStart(time.Now()).AddDate(0, 0, -2).Format("2006-01-02")

			sum := meterCard(t, page.body, "api-calls")
			for _, want := range []string{"API calls by region", ">sum<", "metric_name=api_calls, any product", `<span class="tag">region</span>`,
				"Figures as of ", `class="state state-active">ready<`, `<text class="tick" x="48" dx="-4" y="8" dy="3" text-anchor="end">3k</text>`} {
				if !strings.Contains(sum, want) {
					t.Fatalf("api-calls misses %q: %s", want, sum)
				}
			}
			legend := legendOf(sum)
			wantLegend := "s0 acct_1 · region=eu 700|s1 acct_1 · region=us 600|s2 acct_2 · region=eu 500|s3 acct_3 · region=(none) 400|" +
				"s4 acct_4 · region=eu 300|rest the rest (2 other groups) 30"
			if legend != wantLegend {
				t.Fatalf("api-calls' legend\n%s\nwant\n%s", legend, wantLegend)
			}
			// The rest, day by day: 7 + 5 + 5.25 today, 8 yesterday, 4.75 two days ago.
			rest := segmentsOf(sum, "rest")
			if want := today + "=17.25 " + yesterday + "=8 " + twoDaysAgo + "=4.75"; rest != want {
				t.Fatalf("the rest's segments %q, want %q", rest, want)
			}
			if n := strings.Count(segmentsOf(sum, ""), " ") + 1; n != 8 {
				t.Fatalf("%d segments, want 8 (six today, the rest's two earlier days): %s", n, segmentsOf(sum, ""))
			}

			uc := meterCard(t, page.body, "active-users")
			for _, want := range []string{"unique_count of metadata.user_id", "metric_name=api_calls, product=api", "the rest (2 other groups, sum of their distinct counts)"} {
				if !strings.Contains(uc, want) {
					t.Fatalf("active-users misses %q: %s", want, uc)
				}
			}
			// Distinct users: acct_6 · eu 2 today and 1 yesterday ranks first; the rest is
			// two of the five groups with one user today.
			if got := segmentsOf(uc, "s0"); got != today+"=2 "+yesterday+"=1" {
				t.Fatalf("active-users' top group %q", got)
			}
			if got := segmentsOf(uc, "rest"); got != today+"=2" {
				t.Fatalf("active-users' rest %q", got)
			}
			if strings.Contains(uc, "series-total") {
				t.Fatal("a unique_count meter's legend shows totals, which do not add up")
			}

			late := meterCard(t, page.body, "late")
			if !strings.Contains(late, `class="state state-backfilling"`) || !strings.Contains(late, "Backfilling:") {
				t.Fatalf("the late meter is not marked backfilling: %s", late)
			}

			// Live has none of sandbox's meters.
			tok := c.csrf("/dashboard/usage")
			if p := c.post("/dashboard/environment", url.Values{"csrf_token": {tok}, "environment": {"live"}, "next": {"/dashboard/usage"}}); p.status != http.StatusSeeOther || p.location != "/dashboard/usage" {
				t.Fatalf("switch to live: %d → %q, want back to the Usage page", p.status, p.location)
			}
			if live := c.get("/dashboard/usage").body; !strings.Contains(live, `id="no-meters"`) || strings.Contains(live, "api-calls") || !strings.Contains(live, "live-banner") {
				t.Fatalf("live shows sandbox's meters: %.3000s", live)
			}
		})
	}
}

// meterCard is the section of the Usage page showing the meter key.
func meterCard(t *testing.T, page, key string) string {
	t.Helper()
	return section(t, page, "data-meter-key", key)
}

// legendOf lists a card's legend: "class label total" per series, joined by "|".
func legendOf(card string) string {
	var out []string
	for _, m := range legendEntry.FindAllStringSubmatch(card, -1) {
		out = append(out, strings.TrimSpace(m[1]+" "+m[2]+" "+m[3]))
	}
	return strings.Join(out, "|")
}

// segmentsOf lists a card's segments of the series class ("" = all): "date=value",
// newest day first, as the card draws them oldest first.
func segmentsOf(card, class string) string {
	var out []string
	ms := segment.FindAllStringSubmatch(card, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		if m := ms[i]; class == "" || m[1] == class {
			out = append(out, m[3]+"="+m[2])
		}
	}
	return strings.Join(out, " ")
}

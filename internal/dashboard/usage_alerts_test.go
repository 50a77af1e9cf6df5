package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/testkit/clocktest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// seedAlert writes a usage alert as the alerts API keeps it (CONTRACT §24).
func seedAlert(t *testing.T, db *gorm.DB, env models.Env, m models.Meter, threshold, window, account, group, description string) models.MeterAlert {
	t.Helper()
	a := models.MeterAlert{ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, MeterID: m.ID,
		Threshold: threshold, Window: window, AccountID: account, Group: group, Description: description, CreatedAt: time.Now().UTC()}
	if err := db.Create(&a).Error; err != nil {
		t.Fatal(err)
	}
	return a
}

// createAlert defines a usage alert through the API (POST /v1/meters/{key}/alerts) and
// returns it as kept.
func (s *site) createAlert(key, meter string, body map[string]any) models.MeterAlert {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", s.srv.URL+"/v1/meters/"+meter+"/alerts", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	var obj map[string]any
	if err := json.NewDecoder(res.Body).Decode(&obj); err != nil || res.StatusCode != http.StatusCreated {
		s.t.Fatalf("create alert: %d %v %v", res.StatusCode, obj, err)
	}
	return models.MeterAlert{ID: obj["id"].(string), MeterID: obj["meter_id"].(string)}
}

// seedFirings writes firings of alert a, as the figures' writers record them.
func seedFirings(t *testing.T, db *gorm.DB, env models.Env, fs ...models.MeterAlertFiring) {
	t.Helper()
	for i := range fs {
		fs[i].EnvironmentID, fs[i].CreatedAt = env.ID, fs[i].AsOf
	}
	if err := db.CreateInBatches(fs, 100).Error; err != nil {
		t.Fatal(err)
	}
}

// The Usage page lists each meter's alerts — threshold, window, account, group,
// description, escaped — and marks the series over a threshold in the window that
// contains now: not those of an ended window, nor another environment's; at most
// usageMaxFirings, saying so past it (CONTRACT §24, §21).
func TestUsageAlerts(t *testing.T) {
	for dialect, url := range map[string]string{"postgres": testdb.URL(t), "sqlite": filepath.Join(t.TempDir(), "revops.db")} {
		t.Run(dialect, func(t *testing.T) {
			// Firings of today and this month, seeded, then read by the page on its clock.
			clocktest.AwayFromBoundary(t, 24*time.Hour, 30*time.Second, 0)
			s := newSiteOn(t, testdb.Open(t, url))
			usageAlerts(t, s, testdb.Raw(t, dialect, url))
		})
	}
}

func usageAlerts(t *testing.T, s *site, db *gorm.DB) {
	u := s.newUser("Acme", "owner@acme.test")
	env := s.sandbox(u.orgID)
	calls := s.createMeter(env, meters.Definition{Key: "api-calls", MetricName: "api_calls", Aggregation: models.AggSum, GroupBy: []string{"region"}})
	seats := s.createMeter(env, meters.Definition{Key: "seats", MetricName: "seats", Aggregation: models.AggMax})
	s.createMeter(env, meters.Definition{Key: "quiet", MetricName: "quiet", Aggregation: models.AggCount})

	now := time.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	eu := seedAlert(t, db, env, calls, "1000", models.AlertWindowDay, "", `{"region":"eu"}`, `<b>EU spike</b>`)
	big := seedAlert(t, db, env, seats, "50", models.AlertWindowMonth, "acct_2", "{}", "")
	seedFirings(t, db, env,
		models.MeterAlertFiring{AlertID: eu.ID, AccountID: "acct_1", Groups: `["eu"]`, WindowStart: today, WindowEnd: today.AddDate(0, 0, 1),
			Value: "1300", AsOf: now.Add(-time.Minute)},
		// Yesterday's window has ended: no longer over.
		models.MeterAlertFiring{AlertID: eu.ID, AccountID: "acct_9", Groups: `["eu"]`, WindowStart: today.AddDate(0, 0, -1), WindowEnd: today,
			Value: "5000", AsOf: now.Add(-25 * time.Hour)},
		models.MeterAlertFiring{AlertID: big.ID, AccountID: "acct_2", Groups: "null", WindowStart: month, WindowEnd: month.AddDate(0, 1, 0),
			Value: "64", AsOf: now.Add(-time.Hour)},
	)
	// Another environment's firing of the same alert id is not this one's.
	live, err := s.store.Environment(context.Background(), u.orgID, models.EnvLive)
	if err != nil {
		t.Fatal(err)
	}
	seedFirings(t, db, live, models.MeterAlertFiring{AlertID: eu.ID, AccountID: "acct_live", Groups: `["eu"]`, WindowStart: today,
		WindowEnd: today.AddDate(0, 0, 1), Value: "2000", AsOf: now})

	c := s.client()
	c.mustLogin(u)
	page := c.get("/dashboard/usage")
	if page.status != http.StatusOK {
		t.Fatalf("usage page: %d %.2000s", page.status, page.body)
	}
	callsCard, seatsCard, quietCard := meterCard(t, page.body, "api-calls"), meterCard(t, page.body, "seats"), meterCard(t, page.body, "quiet")
	euRow := alertRowOf(t, callsCard, eu.ID)
	for _, want := range []string{`<td class="mono threshold">1000</td>`, `<td class="window">day</td>`, "every account", "region=eu",
		"&lt;b&gt;EU spike&lt;/b&gt;", `data-account-id="acct_1"`, "acct_1 · region=eu", `<span class="mono over-value">1300</span>`} {
		if !strings.Contains(euRow, want) {
			t.Errorf("the EU alert misses %q: %s", want, euRow)
		}
	}
	for _, not := range []string{"acct_9", "acct_live", "<b>"} {
		if strings.Contains(euRow, not) {
			t.Errorf("the EU alert shows %q: %s", not, euRow)
		}
	}
	bigRow := alertRowOf(t, seatsCard, big.ID)
	for _, want := range []string{">50<", ">month<", ">acct_2<", "any group", `data-account-id="acct_2"`, ">64<"} {
		if !strings.Contains(bigRow, want) {
			t.Errorf("the seats alert misses %q: %s", want, bigRow)
		}
	}
	if !strings.Contains(quietCard, `class="hint no-alerts"`) || !strings.Contains(quietCard, "POST /v1/meters/quiet/alerts") {
		t.Errorf("a meter without alerts: %s", quietCard)
	}
	if strings.Contains(page.body, "over-more") {
		t.Error("says more series are over than it lists")
	}

	// Another organization sees none of them.
	other := s.client()
	other.mustLogin(s.newUser("Bravo", "owner@bravo.test"))
	if p := other.get("/dashboard/usage"); strings.Contains(p.body, eu.ID) || strings.Contains(p.body, "acct_1") {
		t.Fatal("another organization sees the alerts")
	}

	// Past the bound, the page lists the latest usageMaxFirings and says so.
	var many []models.MeterAlertFiring
	for i := range 200 {
		many = append(many, models.MeterAlertFiring{AlertID: eu.ID, AccountID: fmt.Sprintf("bulk_%03d", i), Groups: `["eu"]`,
			WindowStart: today, WindowEnd: today.AddDate(0, 0, 1), Value: "1001", AsOf: now})
	}
	seedFirings(t, db, env, many...)
	page = c.get("/dashboard/usage")
	if n := strings.Count(page.body, `class="over-account"`); n != 200 || !strings.Contains(page.body, `class="error over-more"`) {
		t.Fatalf("201 series over: %d listed, notice %v", n, strings.Contains(page.body, "over-more"))
	}
}

// alertRowOf cuts one alert's row out of a meter card.
func alertRowOf(t *testing.T, card, id string) string {
	t.Helper()
	i := strings.Index(card, `data-alert-id="`+id+`"`)
	if i < 0 {
		t.Fatalf("alert %s not listed: %s", id, card)
	}
	return card[i : i+strings.Index(card[i:], "</tr>")]
}

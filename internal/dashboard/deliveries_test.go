package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// createAccount makes an account through the API, which writes an account-created event.
func (s *site) createAccount(key, name string) models.Event {
	s.t.Helper()
	b, _ := json.Marshal(map[string]any{"name": name})
	req, _ := http.NewRequest("POST", s.srv.URL+"/v1/accounts", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	var acct struct{ ID string }
	_ = json.NewDecoder(res.Body).Decode(&acct)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		s.t.Fatalf("create account: %d", res.StatusCode)
	}
	pr, err := s.keys.Authenticate(context.Background(), key)
	if err != nil {
		s.t.Fatal(err)
	}
	events, err := s.store.EventsForObject(context.Background(), pr.Env, acct.ID)
	if err != nil || len(events) == 0 {
		s.t.Fatalf("events of the new account: %v %d", err, len(events))
	}
	return events[0]
}

// attemptTrace is the trace failAttempts' attempts ran in.
const attemptTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

// fail records failed attempts of an event and leaves it retrying, as the worker would.
func (s *site) failAttempts(e models.Event, n int) {
	s.t.Helper()
	ctx := context.Background()
	env := store.EnvOf(e)
	start := time.Now().UTC().Add(-time.Duration(n) * time.Minute)
	for i := 1; i <= n; i++ {
		a := models.DeliveryAttempt{EventID: e.ID, RunID: "run-1", Number: i, Trigger: models.TriggerScheduled,
			URL: "https://hooks.example/x", Method: "POST", StartedAt: start.Add(time.Duration(i) * time.Minute),
			DurationMS: 120, StatusCode: 500, ResponseExcerpt: "upstream exploded", Error: "status 500", Outcome: models.AttemptFailed,
			TraceID: attemptTrace}
		if err := s.store.SeedAttempt(ctx, env, &a); err != nil {
			s.t.Fatal(err)
		}
	}
	if err := s.store.MarkDispatched(ctx, env, e.ID, "webhook-"+e.ID, "run-1", time.Now().UTC()); err != nil {
		s.t.Fatal(err)
	}
	if err := s.store.SetEventStatus(ctx, env, e.ID, models.EventRetrying); err != nil {
		s.t.Fatal(err)
	}
}

// newEndpoints creates the environment's endpoints, one per description → event types.
func (s *site) newEndpoints(env models.Env, subs ...[]string) []models.WebhookEndpoint {
	s.t.Helper()
	var out []models.WebhookEndpoint
	for i, types := range subs {
		ep, err := webhook.CreateEndpoint(context.Background(), s.store, env, models.WebhookEndpoint{
			URL: fmt.Sprintf("https://hooks%d.example/revops", i+1), Method: "POST", Description: []string{"Billing", "CRM", "Ops"}[i],
			EventTypes: types, Enabled: true, Secret: "whsec_x"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			s.t.Fatal(err)
		}
		out = append(out, ep)
	}
	return out
}

func TestDeliveriesListAndDetail(t *testing.T) {
	s := newSite(t, "--temporal-ui-url", "http://ui.test:8233", "--temporal-namespace", "prod")
	u := s.newUser("Acme", "owner@acme.test")
	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	eps := s.newEndpoints(s.sandbox(u.orgID), []string{"*"}, []string{"account-created"}, []string{"deal-signed"})
	e := s.createAccount(key.Plain, "Globex")
	billing, crm := s.deliveryTo(e, eps[0].ID), s.deliveryTo(e, eps[1].ID)
	s.endDelivery(e, billing, models.AttemptSucceeded, time.Now().UTC().Add(-time.Minute), 0)
	s.endDelivery(e, crm, models.AttemptFailed, time.Now().UTC(), 0)
	c := s.client()
	c.mustLogin(u)

	list := c.get("/dashboard/deliveries")
	i := strings.Index(list.body, `data-event-id="`+e.ID+`"`)
	if i < 0 {
		t.Fatalf("the event is not listed: %.3000s", list.body)
	}
	row := list.body[i : i+strings.Index(list.body[i:], "</tr>")]
	for _, want := range []string{"account-created", "state-failed", "<td>2</td>", "Billing <span class=\"state state-delivered\">", "CRM <span class=\"state state-failed\">"} {
		if !strings.Contains(row, want) {
			t.Fatalf("list row misses %q: %s", want, row)
		}
	}
	if strings.Contains(row, "Ops") {
		t.Error("the list names an endpoint the event was not sent to")
	}
	for _, want := range []string{`<option value="` + eps[2].ID + `">Ops</option>`, `id="replay-failed"`} {
		if !strings.Contains(list.body, want) {
			t.Errorf("list misses %q", want)
		}
	}
	// The endpoint filter, alone and with a status (which then applies to that endpoint's delivery).
	for _, tc := range []struct {
		query string
		shown bool
	}{
		{"endpoint_id=" + eps[0].ID, true},
		{"endpoint_id=" + eps[2].ID, false},
		{"endpoint_id=" + eps[1].ID + "&status=failed", true},
		{"endpoint_id=" + eps[0].ID + "&status=failed", false},
		{"status=delivered", false},
	} {
		p := c.get("/dashboard/deliveries?" + tc.query)
		if p.status != http.StatusOK || strings.Contains(p.body, `data-event-id="`+e.ID+`"`) != tc.shown {
			t.Errorf("?%s: %d, shown %v", tc.query, p.status, !tc.shown)
		}
	}
	if p := c.get("/dashboard/deliveries?endpoint_id=nope"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "endpoint_id is not an id") {
		t.Errorf("a filter that is not an id: %d", p.status)
	}

	detail := c.get("/dashboard/deliveries/" + e.ID)
	for _, want := range []string{"status 500", "scheduled", `&#34;type&#34;: &#34;account-created&#34;`, `class="replay-endpoint"`} {
		if !strings.Contains(detail.body, want) {
			t.Fatalf("detail misses %q: %.4000s", want, detail.body)
		}
	}
	crmCard := card(t, detail.body, eps[1].ID)
	billingCard := card(t, detail.body, eps[0].ID)
	if !strings.Contains(crmCard, "CRM") || !strings.Contains(crmCard, "state-failed") || !strings.Contains(crmCard, "status 500") ||
		!strings.Contains(billingCard, "state-delivered") || strings.Contains(billingCard, "status 500") {
		t.Fatalf("each delivery's attempts under its endpoint:\n%s\n%s", billingCard, crmCard)
	}

	// Attempts of the single-endpoint releases, the Temporal link, and the traces: the
	// attempts' (CONTRACT §19), none for the change, made with tracing off.
	old := s.createAccount(key.Plain, "Initech")
	s.failAttempts(old, 2)
	detail = c.get("/dashboard/deliveries/" + old.ID)
	wantLink := "http://ui.test:8233/namespaces/prod/workflows/webhook-" + old.ID + "/run-1/history"
	for _, want := range []string{wantLink, "Earlier attempts", "upstream exploded", "trace " + attemptTrace,
		`id="trace-id">none (tracing was off)`} {
		if !strings.Contains(detail.body, want) {
			t.Fatalf("detail misses %q: %.4000s", want, detail.body)
		}
	}

	// Another organization, and the other environment, do not see the event.
	other := s.client()
	other.mustLogin(s.newUser("Bravo", "owner@bravo.test"))
	if p := other.get("/dashboard/deliveries/" + e.ID); p.status != http.StatusNotFound {
		t.Fatalf("other organization: %d", p.status)
	}
	// Another organization's endpoint, or an id no endpoint has: a page that says so (never
	// a 5xx), the selector showing the filter, nothing listed.
	for _, id := range []string{eps[0].ID, uuid.NewString()} {
		p := other.get("/dashboard/deliveries?endpoint_id=" + id)
		if p.status != http.StatusOK || strings.Contains(p.body, e.ID) {
			t.Fatalf("other organization's endpoint %s: %d, event listed %v", id, p.status, strings.Contains(p.body, e.ID))
		}
		for _, want := range []string{"No endpoint " + id + " in sandbox", `<option value="` + id + `" selected>deleted endpoint</option>`} {
			if !strings.Contains(p.body, want) {
				t.Errorf("unknown endpoint %s: the page misses %q", id, want)
			}
		}
	}
	tok := c.csrf("/dashboard/deliveries")
	c.post("/dashboard/environment", url.Values{"csrf_token": {tok}, "environment": {"live"}})
	if p := c.get("/dashboard/deliveries/" + e.ID); p.status != http.StatusNotFound {
		t.Fatalf("live environment: %d", p.status)
	}
}

// The replay buttons go through the API's replay service: one endpoint's delivery goes
// again without touching the other's, a delivery still under way answers 409, and
// "Replay all failed" starts a job.
func TestReplayButtons(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	key, _ := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	env := s.sandbox(u.orgID)
	eps := s.newEndpoints(env, []string{"*"}, []string{"*"})
	e := s.createAccount(key.Plain, "Globex")
	a, b := s.deliveryTo(e, eps[0].ID), s.deliveryTo(e, eps[1].ID)
	s.endDelivery(e, a, models.AttemptFailed, time.Now().UTC(), 0)
	retrying := models.DeliveryAttempt{EventID: e.ID, DeliveryID: b.ID, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled,
		StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 502"}
	if err := webhooktest.RecordAttempt(context.Background(), s.store, env, &retrying, models.EventRetrying); err != nil {
		t.Fatal(err)
	}
	c := s.client()
	c.mustLogin(u)
	detail := c.get("/dashboard/deliveries/" + e.ID)
	if !strings.Contains(detail.body, `id="replay-event"`) || strings.Count(detail.body, `class="replay-endpoint"`) != 2 {
		t.Fatal("no replay buttons")
	}
	if !strings.Contains(card(t, detail.body, eps[1].ID), "next attempt ≈") || strings.Contains(card(t, detail.body, eps[0].ID), "next attempt") {
		t.Error("the retrying delivery, and only it, shows its next attempt")
	}
	tok := csrfField.FindStringSubmatch(detail.body)[1]
	path := "/dashboard/deliveries/" + e.ID + "/replay"
	for _, tc := range []struct {
		name     string
		path     string
		form     url.Values
		status   int
		location string
	}{
		{"without csrf", path, url.Values{"endpoint_id": {eps[0].ID}}, http.StatusForbidden, ""},
		{"the whole event while B retries", path, url.Values{"csrf_token": {tok}}, http.StatusConflict, ""},
		{"A's failed delivery while B retries", path, url.Values{"csrf_token": {tok}, "endpoint_id": {eps[0].ID}}, http.StatusSeeOther, path[:len(path)-len("/replay")] + "?replayed=endpoint"},
		{"A again, now pending", path, url.Values{"csrf_token": {tok}, "endpoint_id": {eps[0].ID}}, http.StatusConflict, ""},
		{"B, retrying", path, url.Values{"csrf_token": {tok}, "endpoint_id": {eps[1].ID}}, http.StatusConflict, ""},
		{"an endpoint id that is not one", path, url.Values{"csrf_token": {tok}, "endpoint_id": {"nope"}}, http.StatusNotFound, ""},
		{"unknown event", "/dashboard/deliveries/00000000-0000-4000-8000-000000000000/replay", url.Values{"csrf_token": {tok}}, http.StatusNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := c.post(tc.path, tc.form)
			if p.status != tc.status || p.location != tc.location {
				t.Fatalf("%d → %q, want %d → %q: %.300s", p.status, p.location, tc.status, tc.location, p.body)
			}
		})
	}
	after := deliveryStatuses(t, s, e)
	if after[eps[0].ID] != models.EventPending || after[eps[1].ID] != models.EventRetrying {
		t.Fatalf("after replaying A: %v, want A pending and B still retrying", after)
	}
	if p := c.get("/dashboard/deliveries/" + e.ID + "?replayed=endpoint"); !strings.Contains(p.body, "the delivery to this endpoint goes again") {
		t.Error("no replay notice")
	}

	// Replay all failed: a job over the failed deliveries, Initech's two (Globex's are pending and retrying).
	failed := s.createAccount(key.Plain, "Initech")
	for _, ep := range eps {
		s.endDelivery(failed, s.deliveryTo(failed, ep.ID), models.AttemptFailed, time.Now().UTC(), 0)
	}
	p := c.post("/dashboard/deliveries/replay-failed", url.Values{"csrf_token": {tok}})
	if p.status != http.StatusSeeOther || p.location != "/dashboard/deliveries?replayed=2" {
		t.Fatalf("replay all failed: %d → %q: %.300s", p.status, p.location, p.body)
	}
	if !strings.Contains(c.get(p.location).body, "Replay started for 2 failed deliveries") {
		t.Fatal("no replay notice")
	}
	// A crafted link's text never reaches the notice bar (CONTRACT §17): only our own
	// redirects' words and counts are shown.
	for _, v := range []string{"your account is locked, call 555-0100", "2 failed deliveries. Sign in again at evil.example", "-1", "1e9", "1234567890"} {
		if body := c.get("/dashboard/deliveries?" + url.Values{"replayed": {v}}.Encode()).body; strings.Contains(body, "Replay started") || strings.Contains(body, "evil.example") || strings.Contains(body, "555-0100") {
			t.Errorf("?replayed=%q shows a notice", v)
		}
	}
	// A second job may run beside the first (no worker pages them here); a third is
	// refused, in the dashboard's own words (CONTRACT §17).
	if p := c.post("/dashboard/deliveries/replay-failed", url.Values{"csrf_token": {tok}}); p.status != http.StatusSeeOther {
		t.Fatalf("second job: %d: %.300s", p.status, p.body)
	}
	if p := c.post("/dashboard/deliveries/replay-failed", url.Values{"csrf_token": {tok}}); p.status != http.StatusConflict ||
		!strings.Contains(p.body, "2 bulk replays are already running in this environment") {
		t.Fatalf("third job: %d: %.300s", p.status, p.body)
	}
}

func deliveryStatuses(t *testing.T, s *site, e models.Event) map[string]string {
	t.Helper()
	ds, err := s.store.EventDeliveries(context.Background(), store.EnvOf(e), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range ds {
		out[d.EndpointID] = d.Status
	}
	return out
}

// The endpoint filter pages by that endpoint's deliveries: every event delivered to it
// once across the pages, none of another endpoint's, and a cursor that is not one of its
// deliveries answers 400 (CONTRACT §15), never a 5xx.
func TestDeliveriesOfOneEndpointPage(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	eps := s.newEndpoints(s.sandbox(u.orgID), []string{"account-created"}, []string{"deal-signed"})
	want := map[string]bool{}
	for i := range 27 {
		want[s.createAccount(key.Plain, fmt.Sprint("Account ", i)).ID] = true
	}
	c := s.client()
	c.mustLogin(u)
	seen, path, pages := map[string]bool{}, "/dashboard/deliveries?endpoint_id="+eps[0].ID, 0
	for path != "" {
		p := c.get(path)
		if p.status != http.StatusOK {
			t.Fatalf("%s: %d", path, p.status)
		}
		pages++
		for _, id := range regexpAll(`data-event-id="([^"]+)"`, p.body) {
			if seen[id] || !want[id] {
				t.Fatalf("page %d lists %s again or not delivered to the endpoint", pages, id)
			}
			seen[id] = true
		}
		path = ""
		if m := regexpAll(`<a href="([^"]+)">Older events`, p.body); len(m) == 1 {
			path = strings.ReplaceAll(m[0], "&amp;", "&")
		}
	}
	if len(seen) != len(want) || pages != 2 {
		t.Fatalf("%d of %d events over %d pages", len(seen), len(want), pages)
	}
	if p := c.get("/dashboard/deliveries?endpoint_id=" + eps[1].ID); strings.Contains(p.body, "data-event-id") {
		t.Fatal("the other endpoint lists events it was not sent")
	}
	// An event id is no delivery of the endpoint's: not a cursor of this list.
	for id := range want {
		if p := c.get("/dashboard/deliveries?endpoint_id=" + eps[0].ID + "&starting_after=" + id); p.status != http.StatusBadRequest {
			t.Fatalf("a cursor that is not one of the endpoint's deliveries: %d", p.status)
		}
		break
	}
}

func regexpAll(expr, s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(expr).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

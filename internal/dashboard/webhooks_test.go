package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

var secretField = regexp.MustCompile(`id="webhook-secret" class="mono" type="text" value="([^"]+)"`)

// newOwnerSite is how an endpoint test begins: a receiver that acknowledges, a site that
// sends to it, the owner of the organization org, and its sandbox.
func newOwnerSite(t *testing.T, org string) (*receiver, *site, user, models.Env) {
	t.Helper()
	rcv := newReceiver(t, http.StatusOK, "Revops API Event Received.")
	s := newSite(t, rcv.siteArgs()...)
	u := s.newUser(org, "owner@acme.test")
	return rcv, s, u, s.sandbox(u.orgID)
}

// endpointForm is a complete add/edit form: the defaults of the add page, then fields.
func endpointForm(tok string, fields ...string) url.Values {
	f := url.Values{"csrf_token": {tok}, "url": {"https://example.com/hook"}, "method": {"POST"}, "description": {""},
		"event_types": {"*"}, "enabled": {"on"}, "initial_interval": {"1h"}, "backoff_coefficient": {"1"},
		"maximum_interval": {"1h"}, "maximum_attempts": {"6"}}
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i+1] == "" {
			f.Del(fields[i])
			continue
		}
		f[fields[i]] = strings.Split(fields[i+1], "|")
	}
	return f
}

func (s *site) sandbox(orgID string) models.Env {
	s.t.Helper()
	env, err := s.store.Environment(context.Background(), orgID, "sandbox")
	if err != nil {
		s.t.Fatal(err)
	}
	return env
}

func (s *site) endpoints(env models.Env) []models.WebhookEndpoint {
	s.t.Helper()
	eps, err := s.store.AllWebhookEndpoints(context.Background(), env)
	if err != nil {
		s.t.Fatal(err)
	}
	return eps
}

// Every rule of the API's endpoint validation shows under its own field of the form,
// with what was typed kept, and nothing is saved — on both databases.
func TestWebhookEndpointFormValidation(t *testing.T) {
	for name, s := range bothSites(t) { // private destinations refused, as in production
		t.Run(name, func(t *testing.T) {
			u := s.newUser("Acme", "owner@acme.test")
			c := s.client()
			c.mustLogin(u)
			tok := c.csrf("/dashboard/webhooks/new")
			for _, tc := range []struct {
				name    string
				fields  []string
				errID   string // the field whose message shows
				wantMsg string
			}{
				{"empty url", []string{"url", "|"}, "url", "url is required."},
				{"plain http", []string{"url", "http://example.com/hook"}, "url", "beginning with https://"},
				{"loopback", []string{"url", "https://127.0.0.1/hook"}, "url", "loopback, private, link-local or metadata"},
				{"credentials in the url", []string{"url", "https://user:pw@example.com/hook"}, "url", "url must not carry credentials"},
				{"bad method", []string{"method", "PUT"}, "method", "method must be POST or GET."},
				{"no event type", []string{"event_types", ""}, "event_types", "at least one type"},
				{"unknown event type", []string{"event_types", "deal-signed|deal-exploded"}, "event_types", `"deal-exploded" is not an event type`},
				{"long description", []string{"description", strings.Repeat("d", 256)}, "description", "at most 255 characters"},
				{"interval not a duration", []string{"initial_interval", "soon"}, "initial_interval", "must be a duration"},
				{"interval too short", []string{"maximum_interval", "500ms"}, "maximum_interval", "between 1s and 24h"},
				{"coefficient not a number", []string{"backoff_coefficient", "fast"}, "backoff_coefficient", "must be a number"},
				{"coefficient too large", []string{"backoff_coefficient", "11"}, "backoff_coefficient", "between 1.0 and 10.0"},
				{"attempts not a number", []string{"maximum_attempts", "six"}, "maximum_attempts", "whole number"},
				{"attempts zero", []string{"maximum_attempts", "0"}, "maximum_attempts", "between 1 and 20"},
				{"schedule over 7 days", []string{"initial_interval", "24h", "maximum_interval", "24h", "maximum_attempts", "20"}, "maximum_attempts", "the most is 168h"},
				{"maximum below initial", []string{"initial_interval", "2h", "maximum_interval", "1h"}, "maximum_interval", "must be at least initial_interval"},
				{"control character in a description", []string{"description", "bill\x1bing"}, "description", "description contains a control character"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					p := c.post("/dashboard/webhooks", endpointForm(tok, tc.fields...))
					if p.status != http.StatusBadRequest || !strings.Contains(p.body, `class="field-error"`) || !strings.Contains(html.UnescapeString(p.body), tc.wantMsg) {
						t.Fatalf("%d, want 400 with the inline message %q: %.3000s", p.status, tc.wantMsg, p.body)
					}
					// The message sits right after its own field.
					field := `name="` + tc.errID + `"`
					i, j := strings.Index(p.body, field), strings.Index(p.body, `class="field-error"`)
					if tc.errID == "event_types" {
						i = strings.Index(p.body, `<legend>Event types</legend>`)
					}
					if i < 0 || j < i {
						t.Errorf("the message is not under the %s field", tc.errID)
					}
				})
			}
			// A number fault and a rule fault in one form: both shown, nothing saved.
			p := c.post("/dashboard/webhooks", endpointForm(tok, "url", "http://x.example", "maximum_attempts", "many"))
			if strings.Count(p.body, `class="field-error"`) != 2 {
				t.Errorf("want both faults shown: %.3000s", p.body)
			}
			if !strings.Contains(p.body, `value="http://x.example"`) || !strings.Contains(p.body, `value="many"`) {
				t.Error("the typed values are not kept in the form")
			}
			if eps := s.endpoints(s.sandbox(u.orgID)); len(eps) != 0 {
				t.Fatalf("an invalid form saved %d endpoint(s)", len(eps))
			}
		})
	}
}

func TestWebhookEndpointAddEditSecretTestDelete(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme")
	c := s.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/webhooks/new")

	p := c.post("/dashboard/webhooks", endpointForm(tok, "url", rcv.srv.URL+"/billing", "description", "Billing",
		"event_types", "deal-signed|endpoint-disabled", "method", "GET", "initial_interval", "30s", "backoff_coefficient", "2",
		"maximum_interval", "10m", "maximum_attempts", "4"))
	eps := s.endpoints(env)
	if p.status != http.StatusSeeOther || len(eps) != 1 {
		t.Fatalf("add: %d → %q, %d endpoints: %.500s", p.status, p.location, len(eps), p.body)
	}
	ep := eps[0]
	want := models.RetryPolicy{InitialIntervalMS: 30_000, BackoffCoefficient: 2, MaximumIntervalMS: 600_000, MaximumAttempts: 4}
	if ep.URL != rcv.srv.URL+"/billing" || ep.Method != "GET" || ep.Description != "Billing" || !ep.Enabled ||
		!slices.Equal(ep.EventTypes, []string{"deal-signed", "endpoint-disabled"}) || ep.RetryPolicy != want {
		t.Fatalf("saved %+v", ep)
	}
	if p.location != "/dashboard/webhooks/"+ep.ID+"?notice=created" {
		t.Fatalf("add went to %q", p.location)
	}
	page := c.get(p.location).body
	for _, want := range []string{"signing secret was made", `value="deal-signed" id="type-deal-signed" checked`,
		`value="endpoint-disabled" id="type-endpoint-disabled" checked`, `id="retry-backoff_coefficient" value="2"`, `value="30s"`, `value="10m"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("edit page misses %q: %.4000s", want, page)
		}
	}
	if strings.Contains(page, `value="*" id="type-all" checked`) || strings.Contains(page, ep.Secret) {
		t.Fatal("edit page ticks * or shows the secret without asking")
	}

	// Edit: all types, no retry, disabled by hand.
	p = c.post("/dashboard/webhooks/"+ep.ID, endpointForm(tok, "url", rcv.srv.URL+"/billing2", "description", "Billing v2",
		"event_types", "*", "enabled", "", "maximum_attempts", "1"))
	if p.status != http.StatusSeeOther || p.location != "/dashboard/webhooks/"+ep.ID+"?notice=saved" {
		t.Fatalf("edit: %d → %q: %.500s", p.status, p.location, p.body)
	}
	got := s.endpoints(env)[0]
	if got.ID != ep.ID || got.URL != rcv.srv.URL+"/billing2" || got.Description != "Billing v2" || got.Enabled ||
		got.DisabledReason != models.DisabledManual || !slices.Equal(got.EventTypes, []string{"*"}) || got.MaximumAttempts != 1 || got.Secret != ep.Secret {
		t.Fatalf("after edit %+v", got)
	}
	list := c.get("/dashboard/webhooks").body
	for _, want := range []string{"Billing v2", "* (every type)", "1 attempt, no retry", "disabled (manual)", `action="/dashboard/webhooks/` + ep.ID + `/enable"`} {
		if !strings.Contains(list, want) {
			t.Fatalf("list misses %q: %.4000s", want, list)
		}
	}
	if strings.Contains(list, "failing-banner") {
		t.Fatal("a manually disabled endpoint shows the failing banner")
	}

	// Secret: reveal, rotate.
	m := secretField.FindStringSubmatch(c.post("/dashboard/webhooks/"+ep.ID+"/secret/reveal", url.Values{"csrf_token": {tok}}).body)
	if m == nil || html.UnescapeString(m[1]) != ep.Secret {
		t.Fatal("reveal does not show the secret")
	}
	p = c.post("/dashboard/webhooks/"+ep.ID+"/secret/rotate", url.Values{"csrf_token": {tok}})
	m = secretField.FindStringSubmatch(p.body)
	if m == nil || html.UnescapeString(m[1]) == ep.Secret || html.UnescapeString(m[1]) != s.endpoints(env)[0].Secret || !strings.Contains(p.body, "previous one still signs") {
		t.Fatalf("rotate: %d %.500s", p.status, p.body)
	}

	// Test sends: to this endpoint, enabled or not.
	for _, tc := range []struct {
		name         string
		status       int
		body         string
		want, reason string
	}{
		{"acknowledged", http.StatusOK, "ok: Revops API Event Received.", "PASS", ""},
		{"no sentence", http.StatusOK, "thanks", "FAIL", "not acknowledged"},
		{"server error", http.StatusInternalServerError, "boom", "FAIL", "500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv.set(tc.status, tc.body)
			before := rcv.count()
			p := c.post("/dashboard/webhooks/"+ep.ID+"/test", url.Values{"csrf_token": {tok}, "type": {"account-created"}})
			if p.status != http.StatusOK || !strings.Contains(p.body, tc.want) || !strings.Contains(p.body, tc.reason) {
				t.Fatalf("%d, want %s: %.3000s", p.status, tc.want, p.body)
			}
			if rcv.count() != before+1 {
				t.Fatalf("receiver got %d requests, want 1", rcv.count()-before)
			}
		})
	}
	if p := c.post("/dashboard/webhooks/"+ep.ID+"/test", url.Values{"csrf_token": {tok}, "type": {"deal-exploded"}}); p.status != http.StatusBadRequest {
		t.Fatalf("unknown test type: %d", p.status)
	}

	// Re-enable from the list.
	if p := c.post("/dashboard/webhooks/"+ep.ID+"/enable", url.Values{"csrf_token": {tok}}); p.status != http.StatusSeeOther {
		t.Fatalf("enable: %d", p.status)
	}
	if got := s.endpoints(env)[0]; !got.Enabled || got.DisabledReason != "" {
		t.Fatalf("after enable %+v", got)
	}

	// Delete: a confirmation page; without the box ticked nothing happens.
	if p := c.get("/dashboard/webhooks/" + ep.ID + "/delete"); p.status != http.StatusOK || !strings.Contains(p.body, `name="confirm"`) {
		t.Fatalf("confirmation page: %d", p.status)
	}
	if p := c.post("/dashboard/webhooks/"+ep.ID+"/delete", url.Values{"csrf_token": {tok}}); p.status != http.StatusBadRequest || len(s.endpoints(env)) != 1 {
		t.Fatalf("delete without confirming: %d", p.status)
	}
	p = c.post("/dashboard/webhooks/"+ep.ID+"/delete", url.Values{"csrf_token": {tok}, "confirm": {"yes"}})
	if p.status != http.StatusSeeOther || len(s.endpoints(env)) != 0 {
		t.Fatalf("delete: %d, %d endpoints left", p.status, len(s.endpoints(env)))
	}
	if !strings.Contains(c.get(p.location).body, "Endpoint deleted") {
		t.Error("no notice after the delete")
	}
	if p := c.get("/dashboard/webhooks/" + ep.ID); p.status != http.StatusNotFound {
		t.Fatalf("deleted endpoint page: %d", p.status)
	}
	// The API's path (CONTRACT §21): the deletion is recorded for its job, which ends the
	// endpoint's unfinished deliveries (started by the worker's sweeper here).
	if ds, err := s.store.UnstartedEndpointDeletions(context.Background(), time.Now().Add(time.Hour), 10); err != nil || len(ds) != 1 || ds[0].EndpointID != ep.ID {
		t.Fatalf("deletions awaiting their job: %+v %v", ds, err)
	}
}

// Another organization, or the other environment, cannot see or touch an endpoint; every
// endpoint POST needs the CSRF token.
func TestWebhookEndpointScopeAndCSRF(t *testing.T) {
	s := newSite(t, "--webhook-allow-private")
	u := s.newUser("Acme", "owner@acme.test")
	env := s.sandbox(u.orgID)
	ep, err := webhook.CreateEndpoint(context.Background(), s.store, env, models.WebhookEndpoint{
		URL: "https://a.example/hook", Method: "POST", Enabled: true, Secret: "whsec_x"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	other := s.client()
	other.mustLogin(s.newUser("Bravo", "owner@bravo.test"))
	otok := other.csrf("/dashboard/webhooks")
	for _, path := range []string{"", "/delete"} {
		if p := other.get("/dashboard/webhooks/" + ep.ID + path); p.status != http.StatusNotFound {
			t.Errorf("other organization GET %s: %d", path, p.status)
		}
	}
	for _, path := range []string{"", "/enable", "/delete", "/secret/reveal", "/secret/rotate", "/test"} {
		form := endpointForm(otok, "confirm", "yes", "type", "deal-signed")
		if p := other.post("/dashboard/webhooks/"+ep.ID+path, form); p.status != http.StatusNotFound || strings.Contains(p.body, "whsec_x") {
			t.Errorf("other organization POST %s: %d", path, p.status)
		}
	}
	c := s.client()
	c.mustLogin(u)
	for _, path := range []string{"", "/" + ep.ID, "/" + ep.ID + "/enable", "/" + ep.ID + "/delete", "/" + ep.ID + "/secret/reveal"} {
		if p := c.post("/dashboard/webhooks"+path, endpointForm("forged", "confirm", "yes")); p.status != http.StatusForbidden {
			t.Errorf("POST %s without the token: %d", path, p.status)
		}
	}
	if got := s.endpoints(env); len(got) != 1 || got[0].URL != ep.URL || got[0].Secret != ep.Secret {
		t.Fatalf("endpoint changed: %+v", got)
	}
}

// deliveryTo is the delivery of event e to endpoint epID.
func (s *site) deliveryTo(e models.Event, epID string) models.WebhookDelivery {
	s.t.Helper()
	ds, err := s.store.EventDeliveries(context.Background(), store.EnvOf(e), e.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, d := range ds {
		if d.EndpointID == epID {
			return d
		}
	}
	s.t.Fatalf("event %s has no delivery to %s", e.ID, epID)
	return models.WebhookDelivery{}
}

// endDelivery records one attempt of d with the given outcome at `at`, as the worker would;
// a failed one then ends the delivery failed and lets automatic disabling judge the
// endpoint with disableAfter.
func (s *site) endDelivery(e models.Event, d models.WebhookDelivery, outcome string, at time.Time, disableAfter time.Duration) {
	s.t.Helper()
	ctx := context.Background()
	status := models.EventDelivered
	if outcome == models.AttemptFailed {
		status = models.EventRetrying
	}
	a := models.DeliveryAttempt{EventID: e.ID, DeliveryID: d.ID, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled,
		URL: "https://hooks.example/x", Method: "POST", StartedAt: at, DurationMS: 80, Outcome: outcome}
	if outcome == models.AttemptFailed {
		a.StatusCode, a.Error = 500, "status 500"
	} else {
		a.StatusCode = 200
	}
	// Through the worker's own path, which carries the endpoint's health (CONTRACT §23).
	if err := webhook.RecordAttempt(ctx, s.store, store.EnvOf(e), &a, status, webhook.DefaultFailingAfter); err != nil {
		s.t.Fatal(err)
	}
	if outcome == models.AttemptFailed {
		if _, err := webhook.MarkDeliveryFailed(ctx, s.store, d.ID, "", nil, disableAfter); err != nil {
			s.t.Fatal(err)
		}
	}
}

var rect = regexp.MustCompile(`<rect class="bar-(succeeded|failed|timeout)" x="\d+" y="\d+" width="\d+" height="(\d+)" data-n="\d+">`)

// The Webhooks page draws each endpoint's week from the database, with its success rate;
// an endpoint disabled for failing shows the red banner until "Re-enable" — on both databases.
func TestWebhookListChartAndFailingBanner(t *testing.T) {
	for name, s := range bothSites(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			u := s.newUser("Acme", "owner@acme.test")
			env := s.sandbox(u.orgID)
			now := time.Now().UTC()
			a, err := webhook.CreateEndpoint(ctx, s.store, env, models.WebhookEndpoint{URL: "https://a.example/hook", Method: "POST",
				Description: "Billing", EventTypes: []string{"*"}, Enabled: true, Secret: "whsec_a"}, now.Add(-2*time.Hour), idempotency.Reply[webhook.EndpointObject]{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := webhook.CreateEndpoint(ctx, s.store, env, models.WebhookEndpoint{URL: "https://b.example/hook", Method: "POST",
				Description: "CRM", EventTypes: []string{"deal-signed"}, Enabled: true, Secret: "whsec_b"}, now, idempotency.Reply[webhook.EndpointObject]{})
			if err != nil {
				t.Fatal(err)
			}
			key, err := s.keys.Create(ctx, u.orgID, "sandbox", "secret")
			if err != nil {
				t.Fatal(err)
			}
			var events []models.Event
			for _, n := range []string{"Globex", "Initech", "Umbrella"} {
				events = append(events, s.createAccount(key.Plain, n))
			}
			s.endDelivery(events[0], s.deliveryTo(events[0], a.ID), models.AttemptSucceeded, now.Add(-100*time.Minute), time.Minute)
			s.endDelivery(events[1], s.deliveryTo(events[1], a.ID), models.AttemptSucceeded, now.Add(-90*time.Minute), time.Minute)
			s.endDelivery(events[2], s.deliveryTo(events[2], a.ID), models.AttemptFailed, now.Add(-time.Hour), time.Minute)

			c := s.client()
			c.mustLogin(u)
			list := c.get("/dashboard/webhooks").body
			cardA, cardB := card(t, list, a.ID), card(t, list, b.ID)
			since := a.CreatedAt.Add(time.Hour).Format("2006-01-02") // the failed attempt's day
			for _, want := range []string{"failing-banner", "Disabled (failing since " + since, "66.6 %", "(3 attempts)",
				"2 succeeded, 1 failed, 0 of them timed out", "≤ 100 ms", `class="state health-disabled">disabled`,
				`class="last-success">last success 20`, `class="failing-from">failing since 20`, `action="/dashboard/webhooks/` + a.ID + `/enable"`, "disabled (failing)"} {
				if !strings.Contains(cardA, want) {
					t.Fatalf("Billing's card misses %q: %s", want, cardA)
				}
			}
			// The bars are the attempts' days: all today unless the test runs in the first
			// 100 minutes of a UTC day (the totals above hold either way).
			bars := rect.FindAllStringSubmatch(cardA, -1)
			sameDay := store.DayStart(now.Add(-100 * time.Minute)).Equal(store.DayStart(now))
			if sameDay && (len(bars) != 2 || bars[0][1] != "succeeded" || bars[0][2] != "40" || bars[1][1] != "failed" || bars[1][2] != "20") {
				t.Fatalf("Billing's bars %v, want today's succeeded 40 high and failed 20", bars)
			}
			if strings.Contains(cardB, "failing-banner") || !strings.Contains(cardB, "—") || rect.MatchString(cardB) || !strings.Contains(cardB, `health-idle">idle`) ||
				!strings.Contains(cardB, "deal-signed") {
				t.Fatalf("CRM's card: %s", cardB)
			}
			tok := c.csrf("/dashboard/webhooks")
			p := c.post("/dashboard/webhooks/"+a.ID+"/enable", url.Values{"csrf_token": {tok}})
			if p.status != http.StatusSeeOther {
				t.Fatalf("re-enable: %d %.500s", p.status, p.body)
			}
			list = c.get(p.location).body
			// Re-enabled, its spell is over: healthy (an attempt within 24 h), no failing since.
			if cardA = card(t, list, a.ID); strings.Contains(list, "failing-banner") || !strings.Contains(list, "Endpoint enabled") ||
				!strings.Contains(cardA, `health-healthy">healthy`) || strings.Contains(cardA, "failing since") {
				t.Fatalf("after re-enabling: %.3000s", list)
			}
			if ep, _ := s.store.WebhookEndpointByID(ctx, env, a.ID); !ep.Enabled || ep.DisabledReason != "" || ep.FailingSince != nil {
				t.Fatalf("after re-enabling %+v", ep)
			}
		})
	}
}

// card is the section of the Webhooks page showing endpoint id.
func card(t *testing.T, page, id string) string {
	t.Helper()
	return section(t, page, "data-endpoint-id", id)
}

// section is the part of page from the element whose attr is value to the end of its
// section: one card of a page.
func section(t *testing.T, page, attr, value string) string {
	t.Helper()
	i := strings.Index(page, attr+`="`+value+`"`)
	if i < 0 {
		t.Fatalf("no card for %s: %.3000s", value, page)
	}
	j := strings.Index(page[i:], "</section>")
	return page[i : i+j]
}

// An endpoint disabled because its receiver answered 410 Gone says so on its card, with
// "Re-enable" (CONTRACT §23) — on both databases.
func TestWebhookListGoneBanner(t *testing.T) {
	for name, s := range bothSites(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			u := s.newUser("Acme", "owner@acme.test")
			env := s.sandbox(u.orgID)
			ep, err := webhook.CreateEndpoint(ctx, s.store, env, models.WebhookEndpoint{URL: "https://gone.example/hook", Method: "POST",
				EventTypes: []string{"*"}, Enabled: true, Secret: "whsec_g"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
			if err != nil {
				t.Fatal(err)
			}
			key, err := s.keys.Create(ctx, u.orgID, "sandbox", "secret")
			if err != nil {
				t.Fatal(err)
			}
			e := s.createAccount(key.Plain, "Globex")
			d := s.deliveryTo(e, ep.ID)
			a := models.DeliveryAttempt{EventID: e.ID, DeliveryID: d.ID, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled,
				URL: "https://gone.example/hook", Method: "POST", StartedAt: time.Now().UTC(), StatusCode: 410,
				Outcome: models.AttemptFailed, Error: models.DeliveryGone}
			if err := webhooktest.RecordAttempt(ctx, s.store, store.EnvOf(e), &a, models.EventFailed); err != nil {
				t.Fatal(err)
			}
			if disabled, err := webhook.MarkDeliveryFailed(ctx, s.store, d.ID, "", nil, 0); err != nil || !disabled {
				t.Fatalf("disabled=%v %v", disabled, err)
			}
			c := s.client()
			c.mustLogin(u)
			got := card(t, c.get("/dashboard/webhooks").body, ep.ID)
			for _, want := range []string{"gone-banner", "410 Gone", "disabled (gone)", `action="/dashboard/webhooks/` + ep.ID + `/enable"`} {
				if !strings.Contains(got, want) {
					t.Fatalf("card misses %q: %s", want, got)
				}
			}
			if strings.Contains(got, `<button class="link">Enable</button>`) {
				t.Fatalf("card offers Enable twice: %s", got)
			}
		})
	}
}

package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/catalog/catalogtest"
	"github.com/revops/revops/models"
)

// TestEventTypesListed: GET /v1/event_types is the catalog, secret keys only.
func TestEventTypesListed(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/v1/event_types", h.key["secret live"], nil)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var list struct {
		Object  string `json:"object"`
		HasMore bool   `json:"has_more"`
		Data    []struct {
			Object      string          `json:"object"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &list); err != nil || list.Object != "list" || list.HasMore {
		t.Fatalf("not a one-page list (err %v): %.300s", err, r.Body)
	}
	var names []string
	for _, et := range list.Data {
		names = append(names, et.Name)
		want, _ := catalog.Lookup(et.Name)
		var compact bytes.Buffer
		if err := json.Compact(&compact, et.Schema); err != nil {
			t.Fatal(err)
		}
		if et.Object != "event_type" || et.Description != want.Description || !bytes.Equal(compact.Bytes(), want.Schema) {
			t.Errorf("%s: served %s %q with a schema of %d bytes, the catalog has %q and %d bytes",
				et.Name, et.Object, et.Description, compact.Len(), want.Description, len(want.Schema))
		}
		if _, err := catalogtest.Compile(et.Schema); err != nil {
			t.Errorf("%s: served schema does not compile: %v", et.Name, err)
		}
	}
	if !slices.Equal(names, catalog.Names()) {
		t.Errorf("served %v, want %v", names, catalog.Names())
	}
	expectError(t, h.do("GET", "/v1/event_types", h.key["public sandbox"], nil), http.StatusForbidden, "secret_key_required")
	expectError(t, h.do("GET", "/v1/event_types", "", nil), http.StatusUnauthorized, "missing_api_key")
}

// TestEventPayloadsMatchCatalog drives the API through changes that emit every type of
// the seed, then has the store disable the endpoint as a failing delivery's worker would
// (endpoint-disabled), and validates each event's payload as GET /v1/events/{id} serves
// it (the exact body a delivery sends, CONTRACT §9) against the catalog's schema of its
// type: the check of the e2e receivers, without Temporal.
func TestEventPayloadsMatchCatalog(t *testing.T) {
	h, rc := newReceiving(t)
	h.mustObj(http.StatusOK, "PUT", "/v1/webhook_endpoint", map[string]any{"url": rc.URL + "/hooks/sk_token?key=k1"})
	acc := h.mustObj(http.StatusCreated, "POST", "/v1/accounts", map[string]any{
		"name": "Initech", "external_id": "init-1", "domain": "Initech.Example", "billing_email": "ap@initech.example",
		"properties": map[string]any{"tier": "gold", "seats": 25, "ratio": 0.5, "sla": true},
	})["id"].(string)
	h.mustObj(http.StatusOK, "PATCH", "/v1/accounts/"+acc, map[string]any{"properties": map[string]any{"sla": nil, "seats": 30}})
	bare := h.mustObj(http.StatusCreated, "POST", "/v1/accounts", map[string]any{"name": "Bare"})["id"].(string)
	priced := h.mustObj(http.StatusCreated, "POST", "/v1/deals", pricedDealBody(acc))["id"].(string)
	for _, action := range []string{"submit", "approve", "sign", "activate"} {
		h.mustObj(http.StatusOK, "POST", "/v1/deals/"+priced+"/"+action, nil)
	}
	// A deal with nothing but its customer: every nullable member null, no items.
	empty := h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": bare}, "submit": true})["id"].(string)
	h.mustObj(http.StatusOK, "POST", "/v1/deals/"+empty+"/void", nil)
	h.mustObj(http.StatusOK, "DELETE", "/v1/accounts/"+bare, nil)

	dealEvents := h.objEvents(priced)
	endpoint := disableEndpoint(h, dealEvents[0].ID, dealEvents[1].ID, dealEvents[2].ID, h.objEvents(acc)[0].ID)
	alert := crossAlert(t, h)

	seen := map[string]int{}
	for _, obj := range []string{acc, bare, priced, empty, endpoint, alert} {
		for _, ev := range h.objEvents(obj) {
			r := h.do("GET", "/v1/events/"+ev.ID, h.key[skSandbox], nil)
			var got struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(r.Body, &got); r.Status != http.StatusOK || err != nil {
				t.Fatalf("GET /v1/events/%s: %d %s", ev.ID, r.Status, r.Body)
			}
			typ, err := catalogtest.Validate(got.Payload)
			if err != nil || typ != got.Type {
				t.Errorf("event %s (%s): %v\n%s", ev.ID, got.Type, err, got.Payload)
			}
			if !bytes.Equal(got.Payload, []byte(ev.Payload)) {
				t.Errorf("event %s: served payload differs from the stored body", ev.ID)
			}
			if bytes.Contains(got.Payload, []byte("sk_token")) || bytes.Contains(got.Payload, []byte("/hooks")) {
				t.Errorf("event %s (%s) carries the endpoint's URL: %s", ev.ID, got.Type, got.Payload)
			}
			seen[typ]++
		}
	}
	// The type filter knows the operational type too.
	if r := h.do("GET", "/v1/events?type=endpoint-disabled", h.key[skSandbox], nil); r.Status != http.StatusOK || len(r.json(t)["data"].([]any)) != 1 {
		t.Errorf("GET /v1/events?type=endpoint-disabled: %d %.300s", r.Status, r.Body)
	}
	for _, typ := range catalog.Names() {
		if seen[typ] == 0 {
			t.Errorf("no %s event: the scenario no longer covers every type", typ)
		}
	}

	// The check has teeth on real payloads too: the same deal without its status fails.
	ev := h.objEvents(priced)[0]
	var body map[string]map[string]any
	if err := json.Unmarshal([]byte(ev.Payload), &body); err != nil {
		t.Fatal(err)
	}
	delete(body["deal"], "status")
	bad, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogtest.ValidateAs(ev.Type, bad); err == nil {
		t.Errorf("a %s body without the deal's status passes: %s", ev.Type, bad)
	}
}

// disableEndpoint has the environment's endpoint fail, recover and exhaust a delivery
// (the deliveries of failing, recovering and exhausted: its health events), then fails
// its delivery of eventID and ends it failed as the worker does (MarkDeliveryFailed),
// allowing failures to last only 1 ns (REVOPS_WEBHOOK_DISABLE_AFTER): the store disables
// the endpoint and writes its endpoint-disabled event. It returns the endpoint id.
func disableEndpoint(h *harness, failing, recovering, exhausted, eventID string) string {
	h.t.Helper()
	ctx, env := context.Background(), h.objEnv("sandbox")
	delivery := func(eventID string) models.WebhookDelivery {
		ds, err := h.store.EventDeliveries(ctx, env, eventID)
		if err != nil || len(ds) != 1 {
			h.t.Fatalf("deliveries of %s: %v %v", eventID, ds, err)
		}
		return ds[0]
	}
	// Its health events (CONTRACT §23), as the delivery activity's records make them: a
	// failure an hour old turns it failing, a success recovers it, a last attempt failed
	// exhausts a delivery.
	for _, r := range []struct {
		eventID, outcome, status string
		number                   int
		at                       time.Time
	}{
		{failing, models.AttemptFailed, models.EventRetrying, 1, time.Now().UTC().Add(-time.Hour)},
		{recovering, models.AttemptSucceeded, models.EventDelivered, 1, time.Now().UTC()},
		{exhausted, models.AttemptFailed, models.EventFailed, models.DefaultRetryPolicy.MaximumAttempts, time.Now().UTC()},
	} {
		d := delivery(r.eventID)
		a := models.DeliveryAttempt{EventID: r.eventID, DeliveryID: d.ID, RunID: "run-1", Number: r.number, Trigger: models.TriggerScheduled,
			StartedAt: r.at, Outcome: r.outcome}
		if r.outcome == models.AttemptFailed {
			a.StatusCode, a.Error = 500, "status 500"
		}
		if err := webhook.RecordAttempt(ctx, h.store, env, &a, r.status, webhook.DefaultFailingAfter); err != nil {
			h.t.Fatal(err)
		}
	}
	d := delivery(eventID)
	a := models.DeliveryAttempt{EventID: eventID, DeliveryID: d.ID, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled,
		StartedAt: time.Now().UTC(), StatusCode: 500, Error: "status 500", Outcome: models.AttemptFailed}
	if err := webhooktest.RecordAttempt(ctx, h.store, env, &a, models.EventFailed); err != nil {
		h.t.Fatal(err)
	}
	if disabled, err := webhook.MarkDeliveryFailed(ctx, h.store, d.ID, "", nil, time.Nanosecond); err != nil || !disabled {
		h.t.Fatalf("endpoint not disabled (%v): %v", disabled, err)
	}
	return d.EndpointID
}

// crossAlert makes a usage alert fire (meter-threshold-crossed, CONTRACT §24): a meter,
// its alert, usage over the threshold, and the meter consumer run as the worker would
// (valuesWhenCounted). It returns the alert's id, the event's object id.
func crossAlert(t *testing.T, h *harness) string {
	t.Helper()
	h.mustObj(http.StatusCreated, "POST", "/v1/meters", map[string]any{"key": "api_calls",
		"filter": map[string]any{"metric_name": "api_calls"}, "aggregation": "sum", "group_by": []any{"region"}})
	alert := h.mustObj(http.StatusCreated, "POST", "/v1/meters/api_calls/alerts", map[string]any{
		"threshold": "100", "window": "day", "group": map[string]any{"region": "eu"}, "description": "EU calls"})["id"].(string)
	// Now, not a minute ago: the alert watches windows ending after its creation, and a
	// minute ago is yesterday in the first minute of a UTC day.
	ts := time.Now().UTC().Truncate(time.Second)
	r := h.mustObj(http.StatusCreated, "POST", "/v1/usage/events", map[string]any{"transaction_id": "alert-1", "mode": "increment",
		"event_metrics": []any{usageRow("globex", "eu", 150, ts)}})
	at, err := time.Parse(time.RFC3339Nano, r["received_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	day := ts.Truncate(24 * time.Hour)
	valuesWhenCounted(t, h, "api_calls", fmt.Sprintf("window=day&from=%s&to=%s", day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339)), at)
	return alert
}

package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// eventsFixture: an endpoint (so that events are pending, CONTRACT §13), accounts a and
// b created (account-created each), a renamed (account-updated); b's event failed.
// Returns a's id and the event ids newest first.
func eventsFixture(h *harness) (accountA string, ids []string) {
	h.t.Helper()
	if _, err := webhook.CreateEndpoint(context.Background(), h.store, h.objEnv("sandbox"), models.WebhookEndpoint{
		URL: "https://hooks.example/x", Method: "POST", Enabled: true, Secret: "whsec_fixture",
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		h.t.Fatal(err)
	}
	accountA = h.newObjAccount("Alpha")
	b := h.newObjAccount("Beta")
	h.mustObj(http.StatusOK, "PATCH", "/v1/accounts/"+accountA, map[string]any{"name": "Alpha 2"})
	env := h.objEnv("sandbox")
	bEvents := h.objEvents(b)
	if err := h.store.SetEventStatus(context.Background(), env, bEvents[0].ID, models.EventFailed); err != nil {
		h.t.Fatal(err)
	}
	list := h.mustObj(http.StatusOK, "GET", "/v1/events?limit=100", nil)
	for _, e := range list["data"].([]any) {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	if len(ids) != 3 {
		h.t.Fatalf("%d events, want 3", len(ids))
	}
	return accountA, ids
}

func listIDs(h *harness, query string) ([]string, bool) {
	h.t.Helper()
	out := h.mustObj(http.StatusOK, "GET", "/v1/events?"+query, nil)
	var ids []string
	for _, e := range out["data"].([]any) {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	return ids, out["has_more"].(bool)
}

func TestEventListFilters(t *testing.T) {
	h := newHarness(t)
	a, all := eventsFixture(h)
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	eps, err := h.store.AllWebhookEndpoints(context.Background(), h.objEnv("sandbox"))
	if err != nil || len(eps) != 1 {
		t.Fatalf("endpoints %v (err %v)", eps, err)
	}
	ep := eps[0].ID
	tests := []struct {
		name, query string
		want        int
	}{
		{"no filter", "", 3},
		{"type created", "type=account-created", 2},
		{"type updated", "type=account-updated", 1},
		{"type without events", "type=deal-signed", 0},
		{"object", "object_id=" + a, 2},
		{"object and type", "object_id=" + a + "&type=account-updated", 1},
		{"status failed", "status=failed", 1},
		{"status pending", "status=pending", 2},
		{"after, unix seconds", "created_after=" + strconv.FormatInt(future.Unix(), 10), 0},
		{"before, unix seconds", "created_before=" + strconv.FormatInt(past.Unix(), 10), 0},
		{"range, RFC 3339", "created_after=" + url.QueryEscape(past.Format(time.RFC3339)) + "&created_before=" + url.QueryEscape(future.Format(time.RFC3339)), 3},
		{"endpoint", "endpoint_id=" + ep, 3},
		{"endpoint and its delivery's status", "endpoint_id=" + ep + "&status=failed", 1},
		{"another endpoint", "endpoint_id=00000000-0000-4000-8000-000000000000", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if ids, _ := listIDs(h, tc.query); len(ids) != tc.want {
				t.Errorf("%s: %d events, want %d", tc.query, len(ids), tc.want)
			}
		})
	}

	first, more := listIDs(h, "limit=2")
	if len(first) != 2 || !more || first[0] != all[0] || first[1] != all[1] {
		t.Fatalf("page 1 = %v (more %v), want %v with more", first, more, all[:2])
	}
	rest, more := listIDs(h, "limit=2&starting_after="+first[1])
	if len(rest) != 1 || more || rest[0] != all[2] {
		t.Fatalf("page 2 = %v (more %v), want [%s]", rest, more, all[2])
	}
	if ids, _ := listIDs(h, "status=pending&limit=1&starting_after="+all[0]); len(ids) != 1 {
		t.Errorf("filtered page after a cursor: %v", ids)
	}
}

func TestEventListBadFilters(t *testing.T) {
	h := newHarness(t)
	_, all := eventsFixture(h)
	tests := []struct{ query, code, param string }{
		{"status=lost", "parameter_invalid", "status"},
		{"type=deal-exploded", "parameter_invalid", "type"},
		{"created_after=yesterday", "parameter_invalid", "created_after"},
		{"created_before=-5", "parameter_invalid", "created_before"},
		{"created_after=200&created_before=100", "parameter_invalid", "created_before"},
		{"limit=0", "parameter_invalid", "limit"},
		{"limit=101", "parameter_invalid", "limit"},
		{"starting_after=nope", "parameter_invalid", "starting_after"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			r := h.do("GET", "/v1/events?"+tc.query, h.key[skSandbox], nil)
			expectError(t, r, http.StatusBadRequest, tc.code)
			if p := r.json(t)["error"].(map[string]any)["param"]; p != tc.param {
				t.Errorf("param %v, want %s", p, tc.param)
			}
		})
	}
	// The other environment sees nothing of this one, not even as a cursor.
	live := h.key["secret live"]
	expectError(t, h.do("GET", "/v1/events/"+all[0], live, nil), http.StatusNotFound, "resource_missing")
	expectError(t, h.do("GET", "/v1/events?starting_after="+all[0], live, nil), http.StatusBadRequest, "parameter_invalid")
	if r := h.do("GET", "/v1/events", live, nil); len(r.json(t)["data"].([]any)) != 0 {
		t.Errorf("live lists sandbox events: %s", r.Body)
	}
	expectError(t, h.do("GET", "/v1/events/"+all[0], h.key["public sandbox"], nil), http.StatusForbidden, "secret_key_required")
	expectError(t, h.do("GET", "/v1/events/00000000-0000-0000-0000-000000000000", h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
}

func TestEventObject(t *testing.T) {
	h := newHarness(t)
	a, _ := eventsFixture(h)
	env := h.objEnv("sandbox")
	ev := h.objEvents(a)[0]
	ctx := context.Background()
	started := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, att := range []models.DeliveryAttempt{
		{EventID: ev.ID, RunID: "run-1", Number: 1, Trigger: models.TriggerScheduled, URL: "https://hooks.example/x", Method: "POST",
			StartedAt: started, DurationMS: 120, StatusCode: 500, ResponseExcerpt: "oops", Error: "status 500", Outcome: models.AttemptFailed},
		{EventID: ev.ID, RunID: "run-1", Number: 2, Trigger: models.TriggerScheduled, StartedAt: started.Add(time.Hour),
			DurationMS: 30000, Error: "timeout", Outcome: models.AttemptFailed},
	} {
		if err := h.store.SeedAttempt(ctx, env, &att); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.store.MarkDispatched(ctx, env, ev.ID, "webhook-"+ev.ID, "run-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	o := h.mustObj(http.StatusOK, "GET", "/v1/events/"+ev.ID, nil)
	want := map[string]any{"id": ev.ID, "object": "event", "type": "account-created", "status": "pending",
		"object_id": a, "object_type": "account", "environment": "sandbox", "workflow_id": "webhook-" + ev.ID, "run_id": "run-1",
		"temporal_ui_url": "http://127.0.0.1:8233/namespaces/default/workflows/webhook-" + ev.ID + "/run-1/history"}
	for k, v := range want {
		if o[k] != v {
			t.Errorf("%s = %v, want %v", k, o[k], v)
		}
	}
	payload := o["payload"].(map[string]any)
	if payload["event"].(map[string]any)["id"] != ev.ID || payload["account"].(map[string]any)["id"] != a {
		t.Errorf("payload = %v", payload)
	}
	atts := o["attempts"].([]any)
	if len(atts) != 2 {
		t.Fatalf("attempts = %v", atts)
	}
	first, second := atts[0].(map[string]any), atts[1].(map[string]any)
	if first["number"] != 1.0 || first["status_code"] != 500.0 || first["error"] != "status 500" || first["trigger"] != "scheduled" ||
		first["url"] != "https://hooks.example/x" || first["started_at"] != "2025-03-01T12:00:00Z" || first["duration_ms"] != 120.0 {
		t.Errorf("first attempt = %v", first)
	}
	if second["status_code"] != nil || second["error"] != "timeout" || second["outcome"] != "failed" {
		t.Errorf("second attempt = %v", second)
	}
	// Before any run: null run fields, and attempts still an array.
	other := h.mustObj(http.StatusOK, "GET", "/v1/events/"+h.objEvents(a)[1].ID, nil)
	if other["run_id"] != nil || other["temporal_ui_url"] != nil || len(other["attempts"].([]any)) != 0 {
		t.Errorf("undispatched event = %v", other)
	}
}

// The list carries the same objects as the single read.
func TestEventListCarriesAttempts(t *testing.T) {
	h := newHarness(t)
	a, _ := eventsFixture(h)
	ev := h.objEvents(a)[0]
	att := models.DeliveryAttempt{EventID: ev.ID, Number: 1, Trigger: models.TriggerManual, StartedAt: time.Now(), Outcome: models.AttemptSkipped}
	if err := h.store.SeedAttempt(context.Background(), h.objEnv("sandbox"), &att); err != nil {
		t.Fatal(err)
	}
	out := h.mustObj(http.StatusOK, "GET", "/v1/events?object_id="+a+"&type=account-created", nil)
	data := out["data"].([]any)
	if len(data) != 1 || len(data[0].(map[string]any)["attempts"].([]any)) != 1 {
		t.Fatalf("list = %v", out)
	}
}

// Without a dispatcher (no Temporal client) a replay is still decided in the database
// and answered 202: the event is marked for the sweeper, which reaches its workflow.
func TestReplayWithoutTemporal(t *testing.T) {
	h := newHarness(t)
	_, _ = eventsFixture(h)
	failed, _ := listIDs(h, "status=failed")
	h.mustObj(http.StatusAccepted, "POST", "/v1/events/"+failed[0]+"/replay", nil)
	if ev, _, err := h.store.EventByID(context.Background(), failed[0]); err != nil || ev.Status != models.EventPending || ev.RedispatchAt == nil {
		t.Fatalf("replayed event: %+v %v, want pending and marked for redispatch", ev, err)
	}
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/replaycli"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/catalog/catalogtest"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// tenant is an organization of its own on the stack: its sandbox, a key, the real API.
type tenant struct {
	t   *testing.T
	s   *stack
	env models.Env
	api replayAPI
}

func (s *stack) tenant(t *testing.T, name string, st *dispatch.Starter) *tenant {
	t.Helper()
	ctx := context.Background()
	org, _, err := orgs.Create(ctx, s.db.Store, name, strings.ToLower(name)+"@"+strings.ToLower(name)+".test")
	if err != nil {
		t.Fatal(err)
	}
	env, err := s.db.Store.Environment(ctx, org.ID, models.EnvSandbox)
	if err != nil {
		t.Fatal(err)
	}
	return &tenant{t: t, s: s, env: env, api: s.serveAPI(t, env, st, 1000)}
}

// hook is one endpoint of a tenant with its own receiver and secret.
type hook struct {
	ep     models.WebhookEndpoint
	rc     *webhooktest.Receiver
	secret string
}

func (tn *tenant) endpoint(types []string, policy models.RetryPolicy) *hook {
	tn.t.Helper()
	h := &hook{rc: webhooktest.NewReceiver(tn.t)}
	h.secret, _ = signing.NewSecret()
	var err error
	h.ep, err = webhook.CreateEndpoint(context.Background(), tn.s.db.Store, tn.env, models.WebhookEndpoint{
		URL: h.rc.URL + "/hooks", Method: "POST", Enabled: true, Secret: h.secret, EventTypes: types, RetryPolicy: policy,
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		tn.t.Fatal(err)
	}
	return h
}

func (tn *tenant) call(method, path string, body any) map[string]any {
	tn.t.Helper()
	var out map[string]any
	if err := tn.api.Do(context.Background(), method, path, body, &out); err != nil {
		tn.t.Fatalf("%s %s: %v", method, path, err)
	}
	return out
}

// signedDeal takes a new account and its deal to signed through the API and returns
// their ids.
func (tn *tenant) signedDeal(name string) (account, deal string) {
	account = tn.call("POST", "/v1/accounts", map[string]any{"name": name})["id"].(string)
	deal = tn.call("POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": account},
		"net_price": "100.00", "net_price_currency": "USD", "net_price_precision": "2"})["id"].(string)
	for _, action := range []string{"submit", "approve", "sign"} {
		tn.call("POST", "/v1/deals/"+deal+"/"+action, nil)
	}
	return account, deal
}

// event is the object's only event of the type.
func (tn *tenant) event(objectID, typ string) models.Event {
	tn.t.Helper()
	evs, err := tn.s.db.Store.EventsForObject(context.Background(), tn.env, objectID)
	if err != nil {
		tn.t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == typ {
			return e
		}
	}
	tn.t.Fatalf("no %s event of %s", typ, objectID)
	return models.Event{}
}

// settled waits until none of the tenant's events is pending or retrying and each has
// been dispatched, and their runs have closed: no delivery can come after.
func (tn *tenant) settled(within time.Duration) []models.Event {
	tn.t.Helper()
	var evs []models.Event
	waitFor(tn.t, within, "every event of "+tn.env.ID+" final", func() bool {
		var list struct {
			Data []struct{ ID, Status string }
		}
		if err := tn.api.Do(context.Background(), "GET", "/v1/events?limit=100", nil, &list); err != nil {
			tn.t.Fatal(err)
		}
		evs = evs[:0]
		for _, e := range list.Data {
			if e.Status == models.EventPending || e.Status == models.EventRetrying {
				return false
			}
			row := tn.s.db.Load(tn.t, e.ID)
			if row.Status != models.EventSkipped && !dispatchMarked(row) {
				return false
			}
			evs = append(evs, row)
		}
		return true
	})
	for _, e := range evs {
		if e.Status != models.EventSkipped {
			tn.s.waitClosed([]models.Event{e}, e.Status)
		}
	}
	return evs
}

// received lists "type object-id" of each request, after checking its signature with
// the hook's own secret and its body against the catalog's schema.
func (h *hook) received(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, r := range h.rc.Received() {
		w := checkHook(t, r, h.secret)
		out = append(out, w.typ+" "+w.id)
	}
	slices.Sort(out)
	return out
}

func (h *hook) failing() {
	h.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
}

// attemptsBy counts an event's attempts per endpoint id, and gives each delivery's status.
func (tn *tenant) attemptsBy(eventID string) (attempts map[string]int, status map[string]string) {
	tn.t.Helper()
	ctx := context.Background()
	as, err := tn.s.db.Store.DeliveryAttempts(ctx, tn.env, eventID)
	if err != nil {
		tn.t.Fatal(err)
	}
	attempts, status = map[string]int{}, map[string]string{}
	for _, a := range as {
		attempts[a.EndpointID]++
	}
	ds, err := tn.s.db.Store.EventDeliveries(ctx, tn.env, eventID)
	if err != nil {
		tn.t.Fatal(err)
	}
	for _, d := range ds {
		status[d.EndpointID] = d.Status
	}
	return attempts, status
}

// Acceptance of CONTRACT §13 on the real stack: real Temporal server and worker, real
// API, PostgreSQL and HTTPS receivers, one tenant per scenario.
func TestFanOut(t *testing.T) {
	s := newStack(t)
	s.acts.DisableAfter = 5 * time.Second // scenario "disabled"; the others fail for less
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	st := s.starter(c)
	defer sweepOutbox(st)() // endpoint-disabled events come through the outbox

	t.Run("subscriptions", func(t *testing.T) { fanOutSubscriptions(t, s, c, st) })
	t.Run("one endpoint failing", func(t *testing.T) { fanOutOneFailing(t, s, c, st) })
	t.Run("disabled", func(t *testing.T) { fanOutDisabled(t, s, st) })
	t.Run("sweeper", func(t *testing.T) { fanOutSweeper(t, s) })
}

// An API process without a dispatcher: the sweeper starts its events and reaches the
// workflow of its replays (redispatch_at), then clears the mark.
func fanOutSweeper(t *testing.T, s *stack) {
	tn := s.tenant(t, "Sweeper", nil)
	h := tn.endpoint([]string{"account-created"}, models.RetryPolicy{})
	acc := tn.call("POST", "/v1/accounts", map[string]any{"name": "Swept"})["id"].(string)
	tn.settled(time.Minute)
	ev := tn.event(acc, "account-created")
	if ev.Status != models.EventDelivered || len(h.rc.Received()) != 1 {
		t.Fatalf("event %s, %d requests; want delivered once by the sweeper's start", ev.Status, len(h.rc.Received()))
	}
	tn.call("POST", "/v1/events/"+ev.ID+"/replay", nil)
	waitFor(t, time.Minute, "the replay sent by the sweeper", func() bool { return len(h.rc.Received()) == 2 })
	tn.settled(time.Minute)
	after := tn.s.db.Load(t, ev.ID)
	if after.RedispatchAt != nil || after.RunID == ev.RunID || after.Status != models.EventDelivered {
		t.Errorf("after the swept replay: redispatch_at %v, run %s (was %s), status %s", after.RedispatchAt, after.RunID, ev.RunID, after.Status)
	}
}

// Three endpoints with different event types: each receiver gets exactly the events it
// subscribed to, signed with its own secret; an event nobody subscribes to is skipped.
func fanOutSubscriptions(t *testing.T, s *stack, c client.Client, st *dispatch.Starter) {
	tn := s.tenant(t, "Subscriptions", st)
	signed := tn.endpoint([]string{"deal-signed"}, models.RetryPolicy{})
	accounts := tn.endpoint([]string{"account-created", "account-updated"}, models.RetryPolicy{})
	deals := tn.endpoint([]string{"deal-created", "deal-updated"}, models.RetryPolicy{})

	acc, deal := tn.signedDeal("Initech")
	gone := tn.call("POST", "/v1/accounts", map[string]any{"name": "Hooli"})["id"].(string)
	tn.call("DELETE", "/v1/accounts/"+gone, nil)
	evs := tn.settled(time.Minute)

	want := map[*hook][]string{
		signed:   {"deal-signed " + deal},
		accounts: {"account-created " + acc, "account-created " + gone},
		deals:    {"deal-created " + deal, "deal-updated " + deal, "deal-updated " + deal, "deal-updated " + deal},
	}
	for h, w := range want {
		slices.Sort(w)
		if got := h.received(t); !slices.Equal(got, w) {
			t.Errorf("endpoint %v received %v, want %v", h.ep.EventTypes, got, w)
		}
	}
	for _, e := range evs {
		wantStatus := models.EventDelivered
		if e.Type == "account-deleted" {
			wantStatus = models.EventSkipped
		}
		if e.Status != wantStatus {
			t.Errorf("%s %s is %s, want %s", e.Type, e.ID, e.Status, wantStatus)
		}
	}
	// The run names its endpoints (RevopsEndpointIds) and their hosts.
	ev := tn.event(deal, "deal-signed")
	desc, err := c.DescribeWorkflowExecution(context.Background(), ev.WorkflowID, ev.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	if p := desc.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()[wire.AttrEndpointIDs]; p != nil {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &ids); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(ids, []string{signed.ep.ID}) {
		t.Errorf("%s = %v, want [%s]", wire.AttrEndpointIDs, ids, signed.ep.ID)
	}
}

// Endpoint A failing under its own policy (1 s × 3), B healthy: the event fails with
// A's delivery failed after exactly 3 attempts and B's delivered once; `replay --failed`
// and a replay to A send to A only; replaying B while A is still retrying is a 202.
func fanOutOneFailing(t *testing.T, s *stack, c client.Client, st *dispatch.Starter) {
	ctx := context.Background()
	tn := s.tenant(t, "OneFailing", st)
	fast := models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 1, MaximumIntervalMS: 1000, MaximumAttempts: 3}
	a := tn.endpoint([]string{"deal-signed"}, fast)
	b := tn.endpoint([]string{"deal-signed"}, models.RetryPolicy{})
	a.failing()

	_, deal := tn.signedDeal("Globex")
	tn.settled(time.Minute)
	ev := tn.event(deal, "deal-signed")
	attempts, status := tn.attemptsBy(ev.ID)
	if ev.Status != models.EventFailed || attempts[a.ep.ID] != 3 || status[a.ep.ID] != models.EventFailed ||
		attempts[b.ep.ID] != 1 || status[b.ep.ID] != models.EventDelivered {
		t.Fatalf("event %s; attempts %v; deliveries %v: want failed, A failed after 3, B delivered after 1", ev.Status, attempts, status)
	}
	waitRunStatus(t, c, ev.WorkflowID, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED)

	// `revops webhooks replay --failed`: the failed delivery only.
	a.rc.SetRespond(nil)
	var out, errOut bytes.Buffer
	if err := replaycli.Run(ctx, []string{"--api", tn.api.URL, "--api-key", tn.api.Key, "--poll", "20ms", "--failed"}, &out, &errOut); err != nil {
		t.Fatalf("replay --failed: %v\n%s", err, errOut.String())
	}
	tn.settled(time.Minute)
	if got := len(a.rc.Received()); got != 4 {
		t.Errorf("A received %d requests, want 3 failed + 1 replayed", got)
	}
	if got := len(b.rc.Received()); got != 1 {
		t.Errorf("replay --failed sent B's delivered event again: %d requests", got)
	}

	// A replay to A alone.
	tn.call("POST", "/v1/events/"+ev.ID+"/replay", map[string]any{"endpoint_id": a.ep.ID})
	tn.settled(time.Minute)
	if na, nb := len(a.rc.Received()), len(b.rc.Received()); na != 5 || nb != 1 {
		t.Errorf("after a replay to A: A %d, B %d requests; want 5 and 1", na, nb)
	}

	// A retrying for an hour, B delivered: B's delivery replays at once (202), A's is 409.
	slow := models.RetryPolicy{InitialIntervalMS: time.Hour.Milliseconds(), BackoffCoefficient: 1, MaximumIntervalMS: time.Hour.Milliseconds(), MaximumAttempts: 3}
	if _, err := webhook.UpdateEndpoint(ctx, s.db.Store, tn.env, a.ep.ID, webhook.EndpointPatch{RetryPolicy: &slow}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	a.failing()
	_, deal2 := tn.signedDeal("Umbrella")
	ev2 := tn.event(deal2, "deal-signed")
	waitFor(t, time.Minute, "A retrying, B delivered", func() bool {
		_, status := tn.attemptsBy(ev2.ID)
		return status[a.ep.ID] == models.EventRetrying && status[b.ep.ID] == models.EventDelivered
	})
	open := tn.s.db.Load(t, ev2.ID).RunID
	tn.call("POST", "/v1/events/"+ev2.ID+"/replay", map[string]any{"endpoint_id": b.ep.ID})
	_, err := tn.api.ReplayEvent(ctx, ev2.ID, &revops.EventReplayOne{EndpointID: revops.String(a.ep.ID)})
	if ae := (*revops.Error)(nil); !errors.As(err, &ae) || ae.Status != http.StatusConflict || ae.Code != "delivery_in_progress" {
		t.Errorf("replay of A while it retries: %v, want 409 delivery_in_progress", err)
	}
	waitFor(t, time.Minute, "B's replayed delivery", func() bool {
		n := 0
		for _, r := range b.rc.Received() {
			if r.Header.Get("webhook-id") == ev2.ID {
				n++
			}
		}
		return n == 2
	})
	// The open run took the replay; end it, A would wait an hour.
	if got := tn.s.db.Load(t, ev2.ID).RunID; got != open {
		t.Errorf("B's replay ran in run %s, want the open run %s", got, open)
	}
	if err := c.TerminateWorkflow(ctx, wire.WorkflowID(ev2.ID), "", "test over"); err != nil {
		t.Fatal(err)
	}
}

// A dead endpoint is disabled after REVOPS_WEBHOOK_DISABLE_AFTER (5 s here): the
// endpoint listing endpoint-disabled gets the notice, a `*` endpoint does not; new
// events skip it; re-enabled, it gets the next ones.
func fanOutDisabled(t *testing.T, s *stack, st *dispatch.Starter) {
	ctx := context.Background()
	tn := s.tenant(t, "Disabled", st)
	// Four attempts two seconds apart: the last fails six seconds after the first.
	dead := tn.endpoint([]string{"account-created"}, models.RetryPolicy{InitialIntervalMS: 2000, BackoffCoefficient: 1, MaximumIntervalMS: 2000, MaximumAttempts: 4})
	notified := tn.endpoint([]string{"endpoint-disabled"}, models.RetryPolicy{})
	all := tn.endpoint([]string{"*"}, models.RetryPolicy{})
	dead.failing()

	tn.call("POST", "/v1/accounts", map[string]any{"name": "First"})
	waitFor(t, time.Minute, "the endpoint-disabled notice", func() bool { return len(notified.rc.Received()) == 1 })
	ep, err := s.db.Store.WebhookEndpointByID(ctx, tn.env, dead.ep.ID)
	if err != nil || ep.Enabled || ep.DisabledReason != models.DisabledFailing || ep.FailingSince == nil {
		t.Fatalf("dead endpoint = %+v (err %v), want disabled, failing", ep, err)
	}
	notice := notified.rc.Received()[0]
	if err := verifyStandardWebhook(notified.secret, notice.Header.Get("webhook-id"), notice.Header.Get("webhook-timestamp"), notice.Body, notice.Header.Get("webhook-signature")); err != nil {
		t.Errorf("endpoint-disabled notice: %v", err)
	}
	if err := catalogtest.ValidateAs("endpoint-disabled", notice.Body); err != nil {
		t.Errorf("endpoint-disabled notice: %v\n%s", err, notice.Body)
	}
	var body struct {
		Endpoint map[string]any `json:"webhook_endpoint"`
	}
	if err := json.Unmarshal(notice.Body, &body); err != nil || body.Endpoint["id"] != dead.ep.ID ||
		body.Endpoint["host"] != strings.TrimPrefix(dead.rc.URL, "https://") || strings.Contains(string(notice.Body), "/hooks") {
		t.Errorf("endpoint-disabled body %s: want the endpoint's id and host, never its URL", notice.Body)
	}

	second := tn.call("POST", "/v1/accounts", map[string]any{"name": "Second"})["id"].(string)
	tn.settled(time.Minute)
	for _, r := range all.rc.Received() {
		if strings.Contains(string(r.Body), `"type":"endpoint-disabled"`) {
			t.Errorf("a * endpoint received the operational endpoint-disabled event")
		}
	}
	if got := len(all.rc.Received()); got != 2 {
		t.Errorf("the * endpoint received %d events, want the two account-created", got)
	}
	if n := len(dead.rc.Received()); n != 4 {
		t.Errorf("the disabled endpoint received %d requests, want its 4 failed attempts only", n)
	}
	if _, status := tn.attemptsBy(tn.event(second, "account-created").ID); status[dead.ep.ID] != "" {
		t.Errorf("an event created while the endpoint was disabled has a delivery to it (%s)", status[dead.ep.ID])
	}

	// PATCH {"enabled":true} (the API's store call) brings it back.
	dead.rc.SetRespond(nil)
	on := true
	if _, err := webhook.UpdateEndpoint(ctx, s.db.Store, tn.env, dead.ep.ID, webhook.EndpointPatch{Enabled: &on}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	third := tn.call("POST", "/v1/accounts", map[string]any{"name": "Third"})["id"].(string)
	tn.settled(time.Minute)
	got := dead.rc.Received()
	if len(got) != 5 || got[4].Header.Get("webhook-id") != tn.event(third, "account-created").ID {
		t.Errorf("re-enabled endpoint received %d requests, want the next event as the fifth", len(got))
	}
}

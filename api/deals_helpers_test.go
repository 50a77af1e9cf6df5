package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// objRecorder is a Dispatcher that remembers what the API handed it after commit. The
// API hands events over through a queue (off the request path): ids waits until the
// queue has passed on what it holds.
type objRecorder struct {
	mu     sync.Mutex
	events []models.Event
	queue  *dispatch.Queue
}

func (r *objRecorder) Dispatch(_ context.Context, events []models.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, events...)
}

func (r *objRecorder) ids() []string {
	if r.queue != nil {
		r.queue.Idle()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, e := range r.events {
		out[i] = e.ID
	}
	return out
}

func withObjDispatcher(r *objRecorder) harnessOption {
	return func(_ *config.Config, d *api.Deps) {
		r.queue = dispatch.NewQueue(r, nil, nil)
		afterCommit(d, r.queue, nil)
	}
}

// afterCommit wires events and jobs as the store's after commit, as internal/app wires
// its dispatcher: every change's committed events reach events.
func afterCommit(d *api.Deps, events dispatch.Dispatcher, jobs dispatch.JobStarter) {
	d.Store.(*store.Store).SetAfterCommit(dispatch.AfterCommit{Events: events, Jobs: jobs})
}

const skSandbox = "secret sandbox"

// env returns the models.Env of the harness organization's environment.
func (h *harness) objEnv(name string) models.Env {
	h.t.Helper()
	e, err := h.store.Environment(context.Background(), h.orgID, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

// events lists the event rows of one object in the sandbox.
func (h *harness) objEvents(objectID string) []models.Event {
	h.t.Helper()
	evs, err := h.store.EventsForObject(context.Background(), h.objEnv("sandbox"), objectID)
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

func objEventTypes(evs []models.Event) string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return strings.Join(out, " ")
}

// must sends a request and requires the status, returning the decoded object.
func (h *harness) mustObj(status int, method, path string, body any) map[string]any {
	h.t.Helper()
	r := h.do(method, path, h.key[skSandbox], body)
	if r.Status != status {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, status, r.Body)
	}
	return r.json(h.t)
}

func (h *harness) newObjAccount(name string) string {
	h.t.Helper()
	return h.mustObj(http.StatusCreated, "POST", "/v1/accounts", map[string]any{
		"name": name, "external_id": "ext-" + name, "billing_email": "ap@" + strings.ToLower(name) + ".example",
	})["id"].(string)
}

// pricedDealBody is a create body with every price set.
func pricedDealBody(accountID string) map[string]any {
	return map[string]any{
		"customer":  map[string]any{"id": accountID},
		"net_price": "19999.00", "net_price_currency": "USD", "net_price_precision": "2",
		"original_net_price": "25000", "original_net_price_currency": "USD", "original_net_price_precision": "0",
		"contract_activates_date": "2025-01-01", "opportunity_id": "opp-1",
		"signed_contract_url": "https://docs.example.com/contract.pdf",
		"skus":                []any{map[string]any{"code": "PRO", "name": "Pro plan", "quantity": "10", "unit_price": "1999.90"}},
		"terms":               []any{map[string]any{"name": "SLA", "billing_frequency": "annual", "start_date": "2025-01-01", "end_date": "2025-12-31"}},
	}
}

var objUnixSeconds = regexp.MustCompile(`^[0-9]+$`)

// checkObjPayload verifies an event row and its webhook body (CONTRACT §8).
func checkObjPayload(t *testing.T, ev models.Event, key string) map[string]any {
	t.Helper()
	head := `{"event":{"id":"` + ev.ID + `","time":"` + ev.Time + `","type":"` + ev.Type + `"`
	if ev.Sequence != nil { // CONTRACT §26: last, when the event has one
		head += `,"sequence":` + strconv.FormatInt(*ev.Sequence, 10)
	}
	if !strings.HasPrefix(ev.Payload, head+`},"`+key+`":{`) {
		t.Fatalf("payload does not start with the event then %q: %s", key, ev.Payload)
	}
	// No endpoint in these environments: the event is skipped at once (CONTRACT §13).
	if !objUnixSeconds.MatchString(ev.Time) || ev.Status != models.EventSkipped || ev.ObjectType != key ||
		ev.Environment != "sandbox" || ev.EnvironmentID == "" || ev.OrganizationID == "" || ev.DispatchedAt != nil {
		t.Fatalf("event row fields: %+v", ev)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal([]byte(ev.Payload), &body); err != nil || len(body) != 2 {
		t.Fatalf("payload %s: %v", ev.Payload, err)
	}
	if body[key]["id"] != ev.ObjectID {
		t.Fatalf("payload object id %v, event object id %s", body[key]["id"], ev.ObjectID)
	}
	return body[key]
}

func checkObjTimes(t *testing.T, obj map[string]any) {
	t.Helper()
	for _, k := range []string{"created_at", "updated_at"} {
		s, _ := obj[k].(string)
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !strings.HasSuffix(s, "Z") || ts.IsZero() {
			t.Fatalf("%s = %q is not RFC 3339 UTC", k, s)
		}
	}
}

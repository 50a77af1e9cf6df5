package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// reviewFilterTest is issue 41's filter test: a 3.9 KB filter of 18 $in lists of 100
// numbers (1,856 steps, within the 10,000 bound) and a payload number of 900,000 digits,
// which every $in item parsed again: 1.6 s of CPU for a 200 {"match":false}.
func reviewFilterTest() []byte {
	list := `{"a":{"$in":[` + strings.TrimSuffix(strings.Repeat("0,", 100), ",") + `]}}`
	filter := `{"$or":[` + strings.TrimSuffix(strings.Repeat(list+",", 18), ",") + `]}`
	return []byte(`{"filter":` + filter + `,"payload":{"a":1` + strings.Repeat("7", 900_000-1) + `}}`)
}

// TestWebhookFilterTestReviewPayload (CONTRACT §15, §21): the review's filter test is
// refused by validation, on both databases: 400 invalid_number naming the number, before
// the filter reads it.
func TestWebhookFilterTestReviewPayload(t *testing.T) {
	body := reviewFilterTest()
	if len(body) < 900_000 || len(body) > 1<<20 {
		t.Fatalf("the review's body is %d bytes", len(body))
	}
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db)
			r := h.do("POST", "/v1/webhook_endpoints/filter_test", h.key[skSandbox], body)
			expectError(t, r, http.StatusBadRequest, "invalid_number")
			e := r.json(t)["error"].(map[string]any)
			if e["param"] != "payload.a" || !strings.Contains(e["message"].(string), "(it has 900000)") {
				t.Fatalf("param %v, message %v; want payload.a, its length", e["param"], e["message"])
			}
		})
	}
}

// heldEvents holds the event reads of one event id until release is closed, saying on
// entered when one began: filter tests on that event stay in progress.
type heldEvents struct {
	webhook.EndpointsStore
	id      string
	entered chan struct{}
	release chan struct{}
}

func (h *heldEvents) Event(ctx context.Context, env models.Env, id string) (models.Event, error) {
	if id == h.id {
		h.entered <- struct{}{}
		<-h.release
	}
	return h.EndpointsStore.Event(ctx, env, id)
}

// TestWebhookFilterTestsPerEnvironment (CONTRACT §21, REVOPS_FILTER_TESTS): with four
// filter tests of the sandbox in progress, its fifth waits and is refused 429
// rate_limited with a Retry-After, and its invalid one is still a 400; a test of the live
// environment is answered meanwhile; once the four end, the sandbox's next is answered.
func TestWebhookFilterTestsPerEnvironment(t *testing.T) {
	held := &heldEvents{entered: make(chan struct{}, 8), release: make(chan struct{})}
	h := newHarness(t, func(c *config.Config, d *api.Deps) {
		if c.FilterTests != 4 {
			t.Fatalf("REVOPS_FILTER_TESTS is %d by default, want 4", c.FilterTests)
		}
		st := d.Store.(*store.Store)
		eps, err := app.NewEndpoints(*c, st) // as the process wires them, reading held events
		if err != nil {
			t.Fatal(err)
		}
		held.EndpointsStore, eps.Store = st, held
		d.Endpoints = eps
	})
	const path = "/v1/webhook_endpoints/filter_test"
	eventOf := func(key, name string) string {
		r := h.do("POST", "/v1/accounts", key, map[string]any{"name": name})
		if r.Status != http.StatusCreated {
			t.Fatalf("account: %d %s", r.Status, r.Body)
		}
		evs := h.do("GET", "/v1/events?object_id="+r.json(t)["id"].(string), key, nil).json(t)["data"].([]any)
		return evs[0].(map[string]any)["id"].(string)
	}
	held.id = eventOf(h.key[skSandbox], "Held")
	liveEvent := eventOf(h.key["secret live"], "Elsewhere")
	onHeld := []byte(`{"filter":{"event.type":"account-created"},"event_id":"` + held.id + `"}`)

	var wg sync.WaitGroup
	answers := make(chan response, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := h.send("POST", path, h.key[skSandbox], onHeld)
			if err != nil {
				t.Error(err)
			}
			answers <- r
		}()
	}
	for range 4 {
		select {
		case <-held.entered:
		case <-time.After(time.Minute):
			t.Fatal("four filter tests did not start")
		}
	}

	r := h.do("POST", path, h.key[skSandbox], []byte(`{"filter":{},"payload":{}}`))
	expectError(t, r, http.StatusTooManyRequests, "rate_limited")
	if ra := r.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("429 without a Retry-After: %q", ra)
	}
	r = h.do("POST", path, h.key[skSandbox], []byte(`{"filter":{"$or":[]},"payload":{}}`))
	expectError(t, r, http.StatusBadRequest, "parameter_invalid")
	r = h.do("POST", path, h.key["secret live"], []byte(`{"filter":{"event.type":"account-created"},"event_id":"`+liveEvent+`"}`))
	if r.Status != http.StatusOK || r.json(t)["match"] != true {
		t.Fatalf("the live environment's test while the sandbox's four run: %d %s", r.Status, r.Body)
	}

	close(held.release)
	wg.Wait()
	close(answers)
	for r := range answers {
		if r.Status != http.StatusOK || r.json(t)["match"] != true {
			t.Errorf("a held test: %d %s", r.Status, r.Body)
		}
	}
	if r := h.do("POST", path, h.key[skSandbox], []byte(`{"filter":{},"payload":{}}`)); r.Status != http.StatusOK {
		t.Fatalf("the sandbox's test once its four ended: %d %s", r.Status, r.Body)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// Endpoint health end to end (CONTRACT §23), through Temporal and HTTPS: an endpoint
// whose attempts keep failing turns failing, and the endpoint that lists the health
// types hears it exactly once; it recovers, once; the delivery that used its attempts
// up is announced once. A second subscriber that itself fails every attempt of those
// operational deliveries causes no operational event (no storm). Attempts come every
// second and an endpoint is failing after 3 s of failures (REVOPS_WEBHOOK_RETRY_INTERVAL
// and REVOPS_WEBHOOK_FAILING_AFTER shortened).
func TestEndpointHealthEvents(t *testing.T) {
	s := newStack(t)
	s.acts.FailingAfter = 3 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var aDown atomic.Bool
	aDown.Store(true)
	s.rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ops-down" || (r.URL.Path == "/a" && aDown.Load()) {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok: Revops API Event Received."))
	})
	endpoint := func(path string, types []string) models.WebhookEndpoint {
		ep, err := webhook.CreateEndpoint(ctx, s.db.Store, s.db.Env, models.WebhookEndpoint{URL: s.rc.URL + path, Method: "POST",
			EventTypes: types, Enabled: true, Secret: s.secret}, time.Now(), idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	health := []string{catalog.EndpointFailing, catalog.EndpointRecovered, catalog.DeliveryExhausted}
	a := endpoint("/a", []string{"deal-updated"})
	endpoint("/ops", health)
	endpoint("/ops-down", health)

	w := s.worker()
	defer w.Stop()
	st := s.starter(s.ts.GetDefaultClient())
	// The operational events are written by the attempts' records (the outbox): the
	// sweeper starts them, as it does in every worker process.
	go st.RunSweeper(ctx, 200*time.Millisecond)

	// A fails every attempt of its delivery: failing, then exhausted.
	bad := s.events(1)
	st.Dispatch(ctx, bad)
	s.waitStatus(bad, models.EventFailed, time.Minute)
	received := func(path, typ string) int {
		n := 0
		for _, r := range s.rc.Received() {
			var b struct{ Event struct{ Type string } }
			if r.Path == path && json.Unmarshal(r.Body, &b) == nil && b.Event.Type == typ {
				n++
			}
		}
		return n
	}
	waitFor(t, 2*time.Minute, "endpoint-failing and delivery-exhausted at /ops", func() bool {
		return received("/ops", catalog.EndpointFailing) > 0 && received("/ops", catalog.DeliveryExhausted) > 0
	})
	if h := endpointHealth(t, s, a.ID); h.Status != models.HealthFailing || h.FailingSince == nil {
		t.Errorf("A's health %+v, want failing", h)
	}

	// A answers again: its next success recovers it.
	aDown.Store(false)
	good := s.events(1)
	st.Dispatch(ctx, good)
	s.waitStatus(good, models.EventDelivered, time.Minute)
	waitFor(t, 2*time.Minute, "endpoint-recovered at /ops", func() bool { return received("/ops", catalog.EndpointRecovered) > 0 })
	if h := endpointHealth(t, s, a.ID); h.Status != models.HealthHealthy || h.FailingSince != nil || h.LastSuccessAt == nil {
		t.Errorf("A's health %+v, want healthy", h)
	}

	// Every delivery settled (those to /ops-down used their attempts up): the counts are
	// final, whatever /ops-down's failures might have caused.
	waitFor(t, 2*time.Minute, "every event settled", func() bool {
		evs, _, err := s.db.Store.Events(ctx, s.db.Env, store.EventFilter{}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Status == models.EventPending || ev.Status == models.EventRetrying {
				return false
			}
		}
		return true
	})
	for _, typ := range health {
		evs, _, err := s.db.Store.Events(ctx, s.db.Env, store.EventFilter{Type: typ}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].ObjectID != a.ID {
			t.Errorf("%d %s events, want exactly one, of A", len(evs), typ)
		}
		if n := received("/ops", typ); n != 1 {
			t.Errorf("/ops received %d %s, want 1", n, typ)
		}
		if n := received("/ops-down", typ); n != 6 {
			t.Errorf("/ops-down received %d %s, want its 6 attempts of the one event", n, typ)
		}
		for _, r := range s.rc.Received() {
			if strings.Contains(string(r.Body), s.rc.URL) {
				t.Errorf("an operational body carries an endpoint's URL: %s", r.Body)
			}
		}
	}
	if h := endpointHealth(t, s, a.ID); h.Status != models.HealthHealthy {
		t.Errorf("A's health at the end %+v, want healthy", h)
	}

	// The minute check, as its Schedule starts it, runs on the system worker and, with
	// every spell judged and no minute owed a summary, announces nothing more.
	run, err := s.ts.GetDefaultClient().ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: wire.HealthCheckWorkflowID + "-test", TaskQueue: wire.SystemTaskQueue,
	}, wire.HealthCheckWorkflowName, wire.HealthCheckInput{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("health check run: %v", err)
	}
	for _, typ := range health {
		if evs, _, err := s.db.Store.Events(ctx, s.db.Env, store.EventFilter{Type: typ}, store.Page{Limit: 100}); err != nil || len(evs) != 1 {
			t.Errorf("after the check: %d %s events (%v), want 1", len(evs), typ, err)
		}
	}
}

func endpointHealth(t *testing.T, s *stack, id string) webhook.HealthObject {
	t.Helper()
	ep, err := s.db.Store.WebhookEndpointByID(context.Background(), s.db.Env, id)
	if err != nil {
		t.Fatal(err)
	}
	return webhook.ToHealthObject(ep, time.Now())
}

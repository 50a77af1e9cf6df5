package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// Receivers' own signals on the real stack (CONTRACT §23): real Temporal server and worker,
// the real API, PostgreSQL and HTTPS receivers, the default policy's interval shortened to
// retryInterval by configuration (the starter's, as REVOPS_WEBHOOK_RETRY_INTERVAL).
//   - A 429 with Retry-After: 3600 puts the next attempt an hour after it, not
//     retryInterval: read from the run's pending activity, as Temporal scheduled it.
//   - A 410 ends its delivery failed (gone) after one attempt, disables the endpoint
//     (gone), and exactly one endpoint-disabled reaches the endpoint that lists it.
func TestReceiversSignals(t *testing.T) {
	s := newStack(t)
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	st := s.starter(c)
	defer sweepOutbox(st)() // endpoint-disabled comes through the outbox
	ctx := context.Background()

	tn := s.tenant(t, "Signals", st)
	busy := tn.endpoint([]string{"account-created"}, models.RetryPolicy{}) // the default policy, every retryInterval
	gone := tn.endpoint([]string{"account-created"}, models.RetryPolicy{})
	ops := tn.endpoint([]string{"endpoint-disabled"}, models.RetryPolicy{})
	busy.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	gone.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })

	account := tn.call("POST", "/v1/accounts", map[string]any{"name": "Busy"})["id"].(string)
	ev := tn.event(account, "account-created")
	wfID := wire.WorkflowID(ev.ID)
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), wfID, "", "test over") })

	// 429: the busy delivery's DeliverWebhook waits for its second attempt.
	var next time.Time
	var delay time.Duration
	waitFor(t, time.Minute, "a second attempt scheduled for the busy endpoint", func() bool {
		desc, err := c.DescribeWorkflowExecution(ctx, wfID, "")
		var notYet *serviceerror.NotFound
		if errors.As(err, &notYet) {
			return false // the API starts the run after its commit, a moment after answering
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, pa := range desc.GetPendingActivities() {
			if pa.GetActivityType().GetName() == "DeliverWebhook" && pa.GetAttempt() == 2 && pa.GetNextAttemptScheduleTime() != nil {
				next = pa.GetNextAttemptScheduleTime().AsTime()
				delay = pa.GetLastFailure().GetApplicationFailureInfo().GetNextRetryDelay().AsDuration()
				return true
			}
		}
		return false
	})
	attempts, err := tn.s.db.Store.DeliveryAttempts(ctx, tn.env, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	var first *models.DeliveryAttempt
	for i := range attempts {
		if attempts[i].EndpointID == busy.ep.ID {
			first = &attempts[i]
		}
	}
	if first == nil || first.StatusCode != http.StatusTooManyRequests || first.RetryDelayMS != time.Hour.Milliseconds() {
		t.Fatalf("busy endpoint's attempts: %+v, want one 429 recorded with its hour's delay (the dashboard's next attempt)", attempts)
	}
	if delay != time.Hour || next.Before(first.StartedAt.Add(time.Hour)) {
		t.Fatalf("next attempt at %v with NextRetryDelay %v; first attempt at %v: want the Retry-After's hour, not the policy's %v",
			next, delay, first.StartedAt, retryInterval)
	}

	// 410: the gone endpoint is disabled and announced once.
	waitFor(t, time.Minute, "the endpoint-disabled notice", func() bool { return len(ops.rc.Received()) >= 1 })
	ep, err := s.db.Store.WebhookEndpointByID(ctx, tn.env, gone.ep.ID)
	if err != nil || ep.Enabled || ep.DisabledReason != models.DisabledGone {
		t.Fatalf("gone endpoint: enabled=%v reason=%q (%v), want disabled gone", ep.Enabled, ep.DisabledReason, err)
	}
	n, status := tn.attemptsBy(ev.ID)
	ds, err := s.db.Store.EventDeliveries(ctx, tn.env, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.EndpointID == gone.ep.ID && (d.LastError != models.DeliveryGone || status[gone.ep.ID] != models.EventFailed || n[gone.ep.ID] != 1) {
			t.Fatalf("gone delivery %s %q after %d attempts, want failed gone after 1", d.Status, d.LastError, n[gone.ep.ID])
		}
	}
	notices, _, err := s.db.Store.Events(ctx, tn.env, store.EventFilter{Type: "endpoint-disabled"}, store.Page{Limit: 10})
	if err != nil || len(notices) != 1 {
		t.Fatalf("endpoint-disabled events: %d (%v), want 1", len(notices), err)
	}
	s.waitStatus(notices, models.EventDelivered, time.Minute) // its run closed: no other request can come
	if got := ops.rc.Received(); len(got) != 1 || got[0].Header.Get("webhook-id") != notices[0].ID {
		t.Fatalf("ops endpoint received %d requests, want the one endpoint-disabled", len(got))
	}
	if got := len(busy.rc.Received()); got != 1 {
		t.Fatalf("busy endpoint received %d requests, want 1 (the next is an hour away)", got)
	}
}

// sweepOutbox runs st's outbox sweeper every 200 ms, as a worker process does, until the
// returned stop is called: events committed without a start of their own (an
// endpoint-disabled written by an attempt's record) come through it.
func sweepOutbox(st *dispatch.Starter) (stop func()) {
	ctx, stop := context.WithCancel(context.Background())
	go st.RunSweeper(ctx, 200*time.Millisecond)
	return stop
}

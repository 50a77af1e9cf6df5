// Package e2e runs webhook delivery end to end: a real Temporal server
// (temporaltest), the real worker registration and starter, a real PostgreSQL store
// and real HTTPS receivers. Server-backed tests are slow to build, so they live here only.
package e2e

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
	"github.com/revops/revops/workflows/wire"
)

const retryInterval = time.Second

// stack is one Temporal server, database and receiver for a test.
type stack struct {
	t    *testing.T
	ts   *temporaltest.TestServer
	db   *webhooktest.DB
	rc   *webhooktest.Receiver
	acts *activities.Delivery
	// secret signs deliveries to the receiver's endpoint.
	secret string
}

func newStack(t *testing.T) *stack {
	t.Helper()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ts.GetDefaultClient().OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ts.GetDefaultNamespace(), SearchAttributes: searchAttributeTypes(),
	}); err != nil {
		t.Fatalf("add search attributes: %v", err)
	}
	s := &stack{t: t, ts: ts, db: webhooktest.New(t), rc: webhooktest.NewReceiver(t)}
	s.secret, _ = signing.NewSecret()
	if _, err := webhook.CreateEndpoint(ctx, s.db.Store, s.db.Env, models.WebhookEndpoint{URL: s.rc.URL + "/hooks", Method: "POST", Enabled: true, Secret: s.secret}, time.Now(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	s.acts = &activities.Delivery{Store: s.db.Store, Sender: &webhook.Sender{
		Client: webhook.NewClientWithRoots(true, s.rc.Roots()), AckSentence: webhooktest.AckSentence, Timeout: 5 * time.Second,
	}}
	return s
}

// searchAttributeTypes are the attributes delivery runs set, with their types: the
// keywords of CONTRACT §10 and the keyword list RevopsEndpointIds of §13.
func searchAttributeTypes() map[string]enumspb.IndexedValueType {
	return wire.SearchAttributeTypes
}

// devTemporal starts an embedded Temporal server (revops dev's) with the search
// attributes Revops registers, on the "default" namespace, stopped when the test ends;
// it returns its address.
func devTemporal(t *testing.T) string {
	t.Helper()
	addr := freeAddr(t)
	stack, err := devstack.Start(context.Background(), devstack.Options{DataDir: t.TempDir(), FrontendAddr: addr,
		Namespace: "default", SearchAttributes: wire.SearchAttributes, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("start Temporal: %v", err)
	}
	t.Cleanup(func() { _ = stack.Stop() })
	addEndpointIDsAttribute(t, addr, "default")
	return addr
}

// addEndpointIDsAttribute registers RevopsEndpointIds on a devstack namespace, which
// registers keywords only, and waits until a start that sets it is accepted.
func addEndpointIDsAttribute(t testing.TB, hostPort, namespace string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: hostPort, Namespace: namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatalf("dial Temporal: %v", err)
	}
	defer c.Close()
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: map[string]enumspb.IndexedValueType{wire.AttrEndpointIDs: enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST},
	}); err != nil {
		t.Fatalf("add search attribute %s: %v", wire.AttrEndpointIDs, err)
	}
	// Each service reloads its namespace cache every second: poll with a probe start.
	for {
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: "probe-" + wire.AttrEndpointIDs, TaskQueue: "probe",
			TypedSearchAttributes: temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyKeywordList(wire.AttrEndpointIDs).ValueSet([]string{"x"})),
		}, "Probe")
		if err == nil || temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			_ = c.TerminateWorkflow(ctx, "probe-"+wire.AttrEndpointIDs, "", "probe")
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("search attribute %s not usable: %v", wire.AttrEndpointIDs, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// worker starts the workers of a worker process, one per task queue, as the worker
// command does; stop them with Stop.
func (s *stack) worker() workflows.Workers {
	return s.workerWith(&activities.BulkReplay{Store: s.db.Store})
}

// workerOf starts the workers of a worker process on its client c (one with
// interceptors, say).
func (s *stack) workerOf(c client.Client) workflows.Workers {
	return s.workers(c, &activities.BulkReplay{Store: s.db.Store})
}

// workerWith starts the workers of a process whose bulk replay pages are bulk's.
func (s *stack) workerWith(bulk *activities.BulkReplay) workflows.Workers {
	return s.workers(s.ts.GetDefaultClient(), bulk)
}

// workers starts the workers on c; what their transactions commit (a bulk replay page's
// events, a health transition's) reaches its workflows right after the commit through a
// start queue in front of the stack's starter on c, as internal/app wires a worker
// process's store (a later wiring, an API's, takes over).
func (s *stack) workers(c client.Client, bulk *activities.BulkReplay) workflows.Workers {
	s.db.Store.SetAfterCommit(dispatch.AfterCommit{Events: dispatch.NewQueue(s.starter(c), nil, s.db.Store)})
	ws := workflows.NewWorkers(c, workflows.Activities{
		Delivery: s.acts, Retention: &activities.Retention{Store: s.db.Store}, BulkReplay: bulk,
		Health:        &activities.Health{Store: s.db.Store, FailingAfter: s.acts.FailingAfter},
		MeterBackfill: &activities.MeterBackfill{Store: s.db.Store},
		MeterPurge:    &activities.MeterPurge{Store: s.db.Store},
	}, 100, worker.Options{WorkerStopTimeout: 5 * time.Second})
	if err := ws.Start(); err != nil {
		s.t.Fatal(err)
	}
	return ws
}

func (s *stack) starter(c client.Client) *dispatch.Starter {
	return s.starterEvery(c, retryInterval)
}

// starterEvery starts deliveries whose attempts come every interval. Most tests run no
// sweeper, so a start cut by its timeout would leave its event (and the rest of the
// batch) undelivered: the timeout is generous, for a loaded 2-core machine.
func (s *stack) starterEvery(c client.Client, interval time.Duration) *dispatch.Starter {
	return &dispatch.Starter{Client: c, Store: s.db.Store, RetryInterval: interval,
		SweepAge: time.Millisecond, StartTimeout: 10 * time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func (s *stack) events(n int) []models.Event {
	evs := make([]models.Event, n)
	for i := range evs {
		evs[i] = s.db.Event(s.t, "deal-updated", map[string]any{"n": i}, time.Time{})
	}
	return evs
}

// waitStatus waits until every event has the status and, for a final one, its
// dispatch marks (dispatchMarked).
func (s *stack) waitStatus(evs []models.Event, status string, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		pending := 0
		for _, e := range evs {
			row := s.db.Load(s.t, e.ID)
			if row.Status != status || isFinal(status) && !dispatchMarked(row) {
				pending++
			}
		}
		if pending == 0 {
			s.waitClosed(evs, status)
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d of %d events not %s after %v", pending, len(evs), status, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// isFinal tells whether an event's status is one its run ends on.
func isFinal(status string) bool {
	return status == models.EventDelivered || status == models.EventFailed
}

// dispatchMarked tells whether the starter has written what it writes once Temporal has
// answered: the run's marks (dispatched_at, its ids) and, after a replay, redispatch_at
// cleared. A run may deliver, and even close, before they land: a start marks the row
// after ExecuteWorkflow returns, a replay after SignalWithStart, and a claim's runs
// record attempts while its transaction is still open.
func dispatchMarked(e models.Event) bool {
	return e.DispatchedAt != nil && e.RedispatchAt == nil
}

// waitClosed waits, for a final status, until each event's run has closed too: the
// activity records the status a moment before its run ends, and a replay in that moment
// is (rightly) refused as still in progress. Each run has its own minute: 500 of them,
// one after another on a loaded machine, may take longer than one shared budget.
func (s *stack) waitClosed(evs []models.Event, status string) {
	if !isFinal(status) {
		return
	}
	c := s.ts.GetDefaultClient()
	for _, e := range evs {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_ = c.GetWorkflow(ctx, wire.WorkflowID(e.ID), "").Get(ctx, nil) // a failed run returns its error
		err := ctx.Err()
		cancel()
		if err != nil {
			s.t.Fatalf("the run of event %s still open a minute after it was %s", e.ID, status)
		}
	}
}

func TestDeliveryThroughTemporal(t *testing.T) {
	s := newStack(t)
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	st := s.starter(c)
	ctx := context.Background()

	evs := s.events(1)
	st.Dispatch(ctx, evs)
	s.waitStatus(evs, models.EventDelivered, time.Minute)
	ev := s.db.Load(t, evs[0].ID)
	if ev.DispatchedAt == nil || ev.WorkflowID != wire.WorkflowID(ev.ID) || ev.RunID == "" {
		t.Fatalf("event not marked dispatched: %+v", ev)
	}
	if got := s.rc.Received(); len(got) != 1 || got[0].Header.Get("webhook-id") != ev.ID || string(got[0].Body) != ev.Payload {
		t.Fatalf("receiver got %d requests", len(got))
	}
	// The event is marked delivered by the activity, a moment before the run completes.
	if err := c.GetWorkflow(ctx, ev.WorkflowID, ev.RunID).Get(ctx, nil); err != nil {
		t.Fatalf("run ended with %v", err)
	}
	desc, err := c.DescribeWorkflowExecution(ctx, ev.WorkflowID, ev.RunID)
	if err != nil {
		t.Fatal(err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED || info.GetType().GetName() != "WebhookDelivery" {
		t.Errorf("run %s is %v", info.GetType().GetName(), info.GetStatus())
	}
	for name := range searchAttributeTypes() {
		if _, ok := info.GetSearchAttributes().GetIndexedFields()[name]; !ok {
			t.Errorf("search attribute %s not set", name)
		}
	}
	// REJECT_DUPLICATE: starting a finished delivery again sends nothing and counts as dispatched.
	if err := st.Start(ctx, ev); err != nil {
		t.Fatalf("second start: %v", err)
	}
	time.Sleep(2 * retryInterval)
	if n := len(s.rc.Received()); n != 1 {
		t.Fatalf("a finished delivery was restarted: %d requests", n)
	}

	// An endpoint that never acknowledges: six attempts, event failed, run Failed.
	s.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	bad := s.events(1)
	st.Dispatch(ctx, bad)
	s.waitStatus(bad, models.EventFailed, time.Minute)
	as, err := s.db.Store.DeliveryAttempts(ctx, s.db.Env, bad[0].ID)
	if err != nil || len(as) != wire.MaxAttempts {
		t.Fatalf("%d attempts (err %v), want %d", len(as), err, wire.MaxAttempts)
	}
	for i, a := range as {
		if a.Number != i+1 || a.Outcome != models.AttemptFailed || a.Error != "status 500" {
			t.Errorf("attempt %d recorded as %+v", i+1, a)
		}
		if i > 0 && a.StartedAt.Sub(as[i-1].StartedAt) < retryInterval-100*time.Millisecond {
			t.Errorf("attempt %d came %v after the previous one, want ≥ %v", i+1, a.StartedAt.Sub(as[i-1].StartedAt), retryInterval)
		}
	}
	waitRunStatus(t, c, wire.WorkflowID(bad[0].ID), enumspb.WORKFLOW_EXECUTION_STATUS_FAILED)
}

func waitRunStatus(t *testing.T, c client.Client, id string, want enumspb.WorkflowExecutionStatus) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a loaded machine; it returns as soon as it holds
	for {
		desc, err := c.DescribeWorkflowExecution(context.Background(), id, "")
		if err == nil && desc.GetWorkflowExecutionInfo().GetStatus() == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: status %v (err %v), want %v", id, desc.GetWorkflowExecutionInfo().GetStatus(), err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A worker stopped while deliveries are under way, and another started: every event
// is delivered, its retry picked up by the new worker.
func TestWorkerReplacedMidDeliveries(t *testing.T) {
	s := newStack(t)
	var mu sync.Mutex
	seen := map[string]int{}
	s.rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		first := seen[r.Header.Get("webhook-id")] == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable) // the retry must come from somewhere
			return
		}
		_, _ = io.WriteString(w, webhooktest.AckSentence)
	})
	// A long interval keeps the first worker from making the second attempts itself, even
	// on a slow (loaded) machine. The wait's bound is the premise: the first attempts all
	// failed, and the worker stops polling, before the interval has passed since the
	// first start, so before any retry fell due.
	const interval = 15 * time.Second
	first := s.worker()
	evs := s.events(10)
	started := time.Now()
	s.starterEvery(s.ts.GetDefaultClient(), interval).Dispatch(context.Background(), evs)
	s.waitStatus(evs, models.EventRetrying, interval-time.Second-time.Since(started))
	first.Stop()

	time.Sleep(interval + time.Second) // retries fall due while no worker runs
	for _, e := range evs {
		if st := s.db.Load(t, e.ID).Status; st != models.EventRetrying {
			t.Fatalf("event %s is %s with no worker running", e.ID, st)
		}
	}
	second := s.worker()
	defer second.Stop()
	s.waitStatus(evs, models.EventDelivered, time.Minute+interval)
	for _, e := range evs {
		as, err := s.db.Store.DeliveryAttempts(context.Background(), s.db.Env, e.ID)
		if err != nil || len(as) != 2 || as[0].Outcome != models.AttemptFailed || as[1].Outcome != models.AttemptSucceeded || as[1].Number != 2 {
			t.Errorf("event %s attempts %+v (err %v), want failed then succeeded", e.ID, as, err)
		}
	}
}

// Temporal unreachable when the API dispatches: the events stay undispatched, and the
// sweeper starts them once Temporal answers.
func TestSweeperStartsWhatDispatchCouldNot(t *testing.T) {
	s := newStack(t)
	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Namespace: s.ts.GetDefaultNamespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	evs := s.events(3)
	s.starter(down).Dispatch(context.Background(), evs)
	for _, e := range evs {
		if ev := s.db.Load(t, e.ID); ev.DispatchedAt != nil || ev.Status != models.EventPending {
			t.Fatalf("event %s dispatched while Temporal was unreachable: %+v", e.ID, ev)
		}
	}
	if n, err := s.starter(down).Sweep(context.Background()); err == nil || n != 0 {
		t.Fatalf("sweep without Temporal: started %d, err %v; want an error", n, err)
	}

	w := s.worker()
	defer w.Stop()
	n, err := s.starter(s.ts.GetDefaultClient()).Sweep(context.Background())
	if err != nil || n != len(evs) {
		t.Fatalf("sweep started %d (err %v), want %d", n, err, len(evs))
	}
	s.waitStatus(evs, models.EventDelivered, time.Minute)
	if n, err := s.starter(s.ts.GetDefaultClient()).Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (err %v), want 0", n, err)
	}
	if got := len(s.rc.Received()); got != len(evs) {
		t.Fatalf("receiver got %d requests, want %d", got, len(evs))
	}
}

// Package dispatch is the client side of webhook deliveries: it starts the delivery
// workflow of committed events (right after commit, and the outbox sweeper for what that
// missed), reaches it again for replays, and writes the run summaries shown in the
// Temporal UI. It reads and marks the database; the workflow code and the names both
// sides share stay in package workflows.
package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/platform/isolate"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// StarterStore is what the starter needs of the database.
type StarterStore interface {
	MarkDispatched(ctx context.Context, env models.Env, eventID, workflowID, runID string, at time.Time) error
	UndispatchedEvents(ctx context.Context, before time.Time, limit int) ([]models.Event, error)
	EventsToRedispatch(ctx context.Context, before time.Time, limit int) ([]models.Event, error)
	MarkRedispatched(ctx context.Context, env models.Env, eventID string, seen time.Time, workflowID, runID string) error
	// For the start of an event read from the database (a fresh one carries its Fanout):
	// its deliveries (input) and their endpoints (search attribute, summary).
	EventDeliveries(ctx context.Context, env models.Env, eventID string) ([]models.WebhookDelivery, error)
	AllWebhookEndpoints(ctx context.Context, env models.Env) ([]models.WebhookEndpoint, error)
}

var _ StarterStore = (*store.Store)(nil)

// sweepBatch is how many events one sweeper query takes.
const sweepBatch = 100

// Starter starts delivery workflows: right after a change commits (Dispatch, a
// Dispatcher) and for whatever that missed (Sweep, run by the worker).
type Starter struct {
	Client        client.Client
	Store         StarterStore
	Log           *slog.Logger
	RetryInterval time.Duration // put into every input; 0 means wire.DefaultRetryInterval
	SweepAge      time.Duration // events younger than this are left to Dispatch; default 5s
	StartTimeout  time.Duration // per start; default 5s
	// Health, when set, says whether Temporal answered its last health check: while it
	// did not, Dispatch and the sweeper leave events (new and replayed) in the outbox
	// instead of each waiting out StartTimeout. nil: always try.
	Health Reachability

	// holds are the starts (fresh and replayed events) set aside after they failed, shared
	// by Dispatch, the sweeper and the claimer of this process.
	holds holds
}

// Reachability is what the starter asks of a Temporal health monitor (reachability.Monitor).
type Reachability interface {
	Reachable() bool
}

// reachable is true unless a health monitor says Temporal is away.
func (s *Starter) reachable() bool { return reachable(s.Health) }

func reachable(h Reachability) bool { return h == nil || h.Reachable() }

func (s *Starter) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Dispatch starts the delivery of freshly committed events, and reaches the workflow of
// replayed ones (Redispatch), in the caller: the API calls it off the request path
// (through a Queue, which also detaches ctx from the request and cancels it at
// shutdown). It only logs failures: a start that fails fails only itself (it is set
// aside, and the sweeper retries it after its time), and the events set aside are left
// to the sweeper; after maxFailuresInRow failures in a row (of starts that had not failed
// before) it stops (Temporal is likely away, and each start would wait StartTimeout):
// the sweeper does whatever it could not.
func (s *Starter) Dispatch(ctx context.Context, events []models.Event) {
	if !s.reachable() {
		s.log().Debug("Temporal unreachable; events left to the sweeper", "events", len(events))
		return
	}
	var aside setAsides
	started, inRow := 0, 0
	defer func() { aside.log(s.log(), "webhook delivery", started > 0) }()
	for i, e := range events {
		k := startKey(e)
		if s.holds.held(k) {
			continue
		}
		if err := s.dispatch(ctx, e); err != nil {
			if aside.add(&s.holds, k, err, eventAttrs(e)) {
				inRow++
			}
			if inRow >= maxFailuresInRow {
				s.log().Warn("webhook deliveries not started; the sweeper will retry", "left", len(events)-i-1, "err", err)
				return
			}
			continue
		}
		s.holds.started(k)
		started, inRow = started+1, 0
	}
}

// dispatch starts a new event's workflow, or reaches a replayed event's.
func (s *Starter) dispatch(ctx context.Context, e models.Event) error {
	if e.RedispatchAt != nil {
		return s.Redispatch(ctx, e)
	}
	return s.Start(ctx, e)
}

// Start starts the event's workflow (REJECT_DUPLICATE: a finished delivery is never
// restarted) and marks the event dispatched. An already started workflow counts as
// dispatched: the same id means the same delivery.
func (s *Starter) Start(ctx context.Context, e models.Event) error {
	runID, err := s.launch(ctx, e)
	if err != nil {
		return err
	}
	markCtx, cancelMark := context.WithTimeout(ctx, 10*time.Second)
	defer cancelMark()
	return s.Store.MarkDispatched(markCtx, store.EnvOf(e), e.ID, wire.WorkflowID(e.ID), runID, time.Now().UTC())
}

// launch starts the event's workflow and returns its run id ("" when it had been started
// already: the same id means the same delivery), without marking the event. A panic on
// the event's data fails this start alone (isolate.Call), as any failed start.
func (s *Starter) launch(ctx context.Context, e models.Event) (runID string, err error) {
	err = isolate.Call("workflow_start", func() (err error) {
		runID, err = s.startRun(ctx, e)
		return err
	})
	return runID, err
}

// startRun is launch's start.
func (s *Starter) startRun(ctx context.Context, e models.Event) (string, error) {
	// The start continues the trace of the change that wrote the event, whichever process
	// makes it, after however long (CONTRACT §19): the row carries it.
	ctx = tracing.WithParent(ctx, e.TraceParent)
	startCtx, cancel := context.WithTimeout(ctx, orDefault(s.StartTimeout, 5*time.Second))
	defer cancel()
	opts, in := s.startRequest(startCtx, e)
	run, err := s.Client.ExecuteWorkflow(startCtx, opts, wire.WorkflowName, in)
	switch {
	case err == nil:
		return run.GetRunID(), nil
	case temporal.IsWorkflowExecutionAlreadyStartedError(err):
		return "", nil
	default:
		return "", fmt.Errorf("start workflow %s: %w", wire.WorkflowID(e.ID), err)
	}
}

// startRequest is what Start sends Temporal for the event: the start options and the
// input. A fresh event carries what its change's transaction wrote (its Fanout), so that
// nothing is read between the commit and the start; an event read from the database
// (the sweeper's) has its deliveries and their endpoints read now.
func (s *Starter) startRequest(ctx context.Context, e models.Event) (client.StartWorkflowOptions, wire.DeliveryInput) {
	ds, dests := s.fanout(ctx, e)
	return s.options(e, models.TriggerScheduled, dests), s.input(e, ds, dests)
}

// fanout is the event's deliveries and the destination of each: those it carries from
// its change's transaction, or else those the database has.
func (s *Starter) fanout(ctx context.Context, e models.Event) ([]models.WebhookDelivery, []models.Destination) {
	if f := e.Fanout; f != nil {
		return f.Deliveries, f.Destinations
	}
	return s.readFanout(ctx, e)
}

// readFanout is the event's deliveries as the database has them now, and their
// endpoints as configured now.
func (s *Starter) readFanout(ctx context.Context, e models.Event) ([]models.WebhookDelivery, []models.Destination) {
	ds := s.deliveries(ctx, e)
	return ds, s.endpoints(ctx, e, ds)
}

// options are the start options of a scheduled delivery to dests; Redispatch adjusts the
// policies.
func (s *Starter) options(e models.Event, trigger string, dests []models.Destination) client.StartWorkflowOptions {
	summary, details := describe(e, trigger, dests)
	return client.StartWorkflowOptions{
		ID:                    wire.WorkflowID(e.ID),
		TaskQueue:             wire.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// When this client also runs the worker (`revops serve`, `revops dev`), the
		// first workflow task comes back in the start response and runs here, instead
		// of a trip through the history queue and matching (measured on the dev stack:
		// start→activity p50 ≈ 50 ms without, ≈ 5 ms with). Without a local worker
		// with a free slot the SDK starts the workflow the ordinary way. An eager start
		// bypasses matching, and so fairness, only while that worker has a free slot.
		EnableEagerStart: true,
		// Fair dispatch across environments (CONTRACT §17): the run's workflow tasks,
		// and its attempts (which set it again, wire.DeliveryPriority), are matched
		// to workers by environment, so a slow environment delays only its own.
		Priority:              wire.DeliveryPriority(e.OrganizationID, e.Environment),
		TypedSearchAttributes: SearchAttributesOf(e, endpointIDs(dests)),
		StaticSummary:         summary,
		StaticDetails:         details,
	}
}

// deliveries are the event's deliveries as the database has them now (nil when it cannot
// tell: the run then asks for its pending ones itself). One query serves the start
// options and the input.
func (s *Starter) deliveries(ctx context.Context, e models.Event) []models.WebhookDelivery {
	ds, err := s.Store.EventDeliveries(ctx, store.EnvOf(e), e.ID)
	if err != nil {
		s.log().Debug("deliveries not read; the run will ask for them", "event_id", e.ID, "err", err)
		return nil
	}
	return ds
}

// input is the run's input. It carries the event's pending deliveries (ids and policy
// copies, never URLs or secrets), so that the first workflow task schedules them without
// asking the database first.
func (s *Starter) input(e models.Event, ds []models.WebhookDelivery, dests []models.Destination) wire.DeliveryInput {
	in := wire.DeliveryInput{
		EventID: e.ID, Type: e.Type, ObjectID: e.ObjectID, Environment: e.Environment,
		OrganizationID: e.OrganizationID, Trigger: models.TriggerScheduled,
		RetryInterval: orDefault(s.RetryInterval, wire.DefaultRetryInterval),
		Code:          wire.CodeFanOut,
	}
	for _, d := range ds {
		if d.Status == models.EventPending && d.WaitingFor == "" { // a waiting one has no run (CONTRACT §26)
			p := models.PendingDeliveryOf(d)
			p.Pace = paceOf(dests, d.EndpointID)
			in.Deliveries = append(in.Deliveries, p)
		}
	}
	return in
}

// paceOf is the rate of the endpoint among dests (CONTRACT §27): the run puts its
// attempts on the paced queue. 0 when it is unpaced or not among them (deleted since:
// its attempt sends nothing).
func paceOf(dests []models.Destination, endpointID string) float64 {
	for _, d := range dests {
		if d.EndpointID == endpointID {
			return d.Pace
		}
	}
	return 0
}

// SearchAttributesOf are the attributes every run of an event carries (CONTRACT §10,
// §13): four keywords, and the keyword list of the endpoints it delivers to.
func SearchAttributesOf(e models.Event, endpointIDs []string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		temporal.NewSearchAttributeKeyKeyword(wire.AttrEventType).ValueSet(e.Type),
		temporal.NewSearchAttributeKeyKeyword(wire.AttrObjectID).ValueSet(e.ObjectID),
		temporal.NewSearchAttributeKeyKeyword(wire.AttrEnvironment).ValueSet(e.Environment),
		temporal.NewSearchAttributeKeyKeyword(wire.AttrOrganizationID).ValueSet(e.OrganizationID),
		temporal.NewSearchAttributeKeyKeywordList(wire.AttrEndpointIDs).ValueSet(endpointIDs),
	)
}

// Sweep starts, oldest first, every event without a workflow that is older than
// SweepAge, then reaches the workflow of every event replayed more than SweepAge ago
// that the dispatcher did not reach, and returns how many it handled. A start that fails
// fails only itself (sweep); after failures in a row it stops (Temporal is likely down;
// the next sweep tries again).
func (s *Starter) Sweep(ctx context.Context) (int, error) {
	age := orDefault(s.SweepAge, 5*time.Second)
	n, err := s.eventSweep(age, s.Store.UndispatchedEvents, s.Start).run(ctx)
	if err != nil {
		return n, err
	}
	m, err := s.eventSweep(age, s.Store.EventsToRedispatch, s.Redispatch).run(ctx)
	return n + m, err
}

// RunSweeper sweeps every interval until ctx ends. While the health monitor says
// Temporal is away it does not try; a streak of failed sweeps is logged when it starts
// and when it ends, not at every tick.
func (s *Starter) RunSweeper(ctx context.Context, every time.Duration) {
	failing := false
	sweepEvery(ctx, every, s.Health, func() {
		n, err := s.Sweep(ctx)
		switch {
		case ctx.Err() != nil:
		case err != nil && !failing:
			failing = true
			s.log().Warn("webhook sweeper cannot start deliveries; retrying every interval", "started", n, "every", every, "err", err)
		case err != nil:
			s.log().Debug("webhook sweeper", "started", n, "err", err)
		default:
			if failing {
				failing = false
				s.log().Info("webhook sweeper starts deliveries again")
			}
			if n > 0 {
				s.log().Info("webhook sweeper started deliveries", "started", n)
			}
		}
	})
}

// sweepEvery runs sweep at once, then every interval, until ctx ends; it skips a turn
// while h says Temporal is away (nil h: never).
func sweepEvery(ctx context.Context, every time.Duration, h Reachability, sweep func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if reachable(h) {
			sweep()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

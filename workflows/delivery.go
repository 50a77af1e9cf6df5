package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// Bookkeeping activities (MarkDeliveryFailed, RecordDelivered) write one row each: they
// are retried until the database answers, so that the event's status always ends as
// its run did (CONTRACT §10).
var bookkeeping = untilDone(10 * time.Second)

// systemBookkeeping runs the bookkeeping that settles a delivery on revops-system
// (CONTRACT §17), so that marking a delivery failed never waits for a tenant's slot on
// revops-webhooks. Runs of earlier releases replay unchanged: replay matches an
// activity's command by id and type, not by task queue.
var systemBookkeeping = func() workflow.ActivityOptions {
	o := bookkeeping
	o.TaskQueue = wire.SystemTaskQueue
	return o
}()

// Workflow changes, each guarded by workflow.GetVersion so that runs started by an
// earlier release replay (testdata/histories/<release>/).
const (
	// changeSettleInWorkflow: the workflow marks the event failed when the delivery
	// finally fails, and records a successful attempt the activity could not record.
	changeSettleInWorkflow = "mark-failed-in-workflow"
	// changeFanOut: one DeliverWebhook series per delivery of the event, each under its
	// own retry policy, concurrently, and replays reach the open run by signal.
	// Version fanOutOneMarker (2) is version 1 with change changeDeliveriesInInput
	// applied, under this one marker: every GetVersion a run calls first records a
	// marker and upserts the TemporalChangeVersion search attribute, a visibility write
	// on the server that a run of 1 ms of work pays in full (docs/benchmarks.md). New
	// runs no longer ask it: their input says their code (CodeFanOut, below).
	changeFanOut = "fanout"
	// changeDeliveriesInInput: the dispatcher puts the event's pending deliveries into
	// the input, and the first workflow task schedules them, without PendingDeliveries.
	// Asked only by runs that recorded fanout 1 (or none) before it.
	changeDeliveriesInInput = "deliveries-in-input"
	// changeRecheckReplayed: a replay signal that finds pending a delivery whose series
	// is still running here (settling: a replay came after it failed) has the run look
	// again once that series has settled, so the replay gets a new series in this run
	// instead of being consumed by the skip. Asked only when such a skip happens (a
	// marker and a search-attribute upsert, see changeFanOut), at most once per run.
	changeRecheckReplayed = "recheck-replayed-while-settling"
)

// Versions of changeFanOut.
const (
	fanOutFirst     workflow.Version = 1 // then changeDeliveriesInInput is asked
	fanOutOneMarker workflow.Version = 2 // deliveries in input, no second marker
)

// WebhookDelivery delivers one event to every endpoint it has a delivery for (CONTRACT
// §13). New runs fan out (fanout.go) as their input's Code says; runs started by
// earlier releases keep the code path their change versions recorded (changeFanOut). A
// run whose delivery ended failed returns the error, so it ends Failed in the UI.
func WebhookDelivery(ctx workflow.Context, in wire.DeliveryInput) error {
	switch {
	case in.Code == wire.CodeFanOut:
		return fanOut(ctx, in, true)
	case in.Code > wire.CodeFanOut:
		// A code of a later release: this worker cannot run it. The panic fails the
		// workflow task, which Temporal retries until a worker that knows the code takes it
		// (what GetVersion does for a version it does not know), instead of this code
		// taking the oldest path.
		panic(fmt.Sprintf("wire.DeliveryInput.Code %d is newer than this worker's %d", in.Code, wire.CodeFanOut))
	}
	switch workflow.GetVersion(ctx, changeFanOut, workflow.DefaultVersion, fanOutOneMarker) {
	case fanOutOneMarker:
		return fanOut(ctx, in, true)
	case fanOutFirst:
		return fanOut(ctx, in, deliveriesInInput(ctx))
	default:
		err := singleDelivery(ctx, in)
		// A replay signalled to a run of an earlier release once this code is deployed
		// is taken before the run closes, as a fan-out run would; the recorded histories
		// of those releases hold no signal, so they replay unchanged.
		if !drain(workflow.GetSignalChannel(ctx, wire.SignalReplay)) {
			return err
		}
		in.Trigger = models.TriggerManual
		if ferr := fanOut(ctx, in, deliveriesInInput(ctx)); err == nil {
			err = ferr
		}
		return err
	}
}

// deliveriesInInput is change changeDeliveriesInInput for the runs that ask it.
func deliveriesInInput(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, changeDeliveriesInInput, workflow.DefaultVersion, 1) == 1
}

// singleDelivery is the code of the single-endpoint releases: one activity, retried
// hourly up to six attempts, to the environment's (oldest) endpoint.
func singleDelivery(ctx workflow.Context, in wire.DeliveryInput) error {
	interval := in.RetryInterval
	if interval <= 0 {
		interval = wire.DefaultRetryInterval
	}
	deliverCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: wire.AttemptTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    interval,
			BackoffCoefficient: 1.0,
			MaximumInterval:    interval,
			MaximumAttempts:    wire.MaxAttempts,
		},
		Priority: priorityOf(in),
	})
	var a *activities.Delivery
	var res activities.DeliverResult
	err := workflow.ExecuteActivity(deliverCtx, a.DeliverWebhook, activities.DeliverInput{
		EventID: in.EventID, Trigger: in.Trigger, MaxAttempts: wire.MaxAttempts,
	}).Get(deliverCtx, &res)
	if workflow.GetVersion(ctx, changeSettleInWorkflow, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return err
	}
	return settle(ctx, activities.MarkFailedInput{EventID: in.EventID}, res, err)
}

// settle makes the status of the delivery (mark.DeliveryID; "" on the single-endpoint
// path: the event's) say how its activity series ended, then returns the series' error:
// the run still ends Failed when the delivery did. It runs even when the run is being
// cancelled, so that no delivery stays retrying after its run closed.
func settle(ctx workflow.Context, mark activities.MarkFailedInput, res activities.DeliverResult, deliveryErr error) error {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	ctx = workflow.WithActivityOptions(ctx, systemBookkeeping)
	var a *activities.Delivery
	if deliveryErr == nil {
		if res.Unrecorded == nil {
			return nil
		}
		return workflow.ExecuteActivity(ctx, a.RecordDelivered, activities.RecordDeliveredInput{
			EventID: mark.EventID, DeliveryID: mark.DeliveryID, Attempt: *res.Unrecorded,
		}).Get(ctx, nil)
	}
	err := workflow.ExecuteActivity(ctx, a.MarkDeliveryFailed, mark).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Error("delivery not marked failed", "event_id", mark.EventID, "delivery_id", mark.DeliveryID, "err", err)
	}
	return deliveryErr
}

package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// ErrTypeDeliveriesFailed is the type of the error a fan-out run ends with when one of
// its deliveries ended failed.
const ErrTypeDeliveriesFailed = "deliveries_failed"

// fanout is the state of one fan-out run. Workflow code runs one coroutine at a time, so
// its fields need no lock; its maps are only looked
// up, never ranged over (determinism).
type fanout struct {
	in wire.DeliveryInput
	// running holds each delivery whose activity series is under way, as it was read
	// when the series began.
	running map[string]models.PendingDelivery
	done    workflow.Channel // a delivery's id when its series and bookkeeping end
	// recheck holds running deliveries that a replay made pending again: the run asks
	// for pending deliveries once their series ends (change changeRecheckReplayed).
	recheck map[string]bool
	// failed holds the error of each delivery whose last series in this run ended
	// failed (a replayed one that then succeeds leaves it); ids in first-failure order.
	failed   map[string]error
	failedID []string
}

// fanOut runs every pending delivery of the event concurrently, each as its own
// DeliverWebhook series under its own retry policy; a replay signal starts the ones that
// became pending since. Before it returns it drains the signals that came meanwhile, so a
// replay signalled to this run is never lost with it. fromInput: the run starts the
// deliveries of its input (change changeDeliveriesInInput) when it has any.
func fanOut(ctx workflow.Context, in wire.DeliveryInput, fromInput bool) error {
	r := &fanout{in: in, running: map[string]models.PendingDelivery{}, recheck: map[string]bool{},
		failed: map[string]error{}, done: workflow.NewChannel(ctx)}
	replays := workflow.GetSignalChannel(ctx, wire.SignalReplay)
	if fromInput && len(in.Deliveries) > 0 {
		// The dispatcher read these before the start: a signal that came with the start
		// (or a replay committed since) is left to the loop, which asks the database.
		r.start(ctx, in.Deliveries, in.Trigger)
	} else {
		drain(replays) // a signal that came with the start: the first look covers it
		if err := r.startPending(ctx, in.Trigger); err != nil {
			return err
		}
	}
	for {
		var err error
		for len(r.running) > 0 && err == nil {
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(r.done, func(c workflow.ReceiveChannel, _ bool) {
				var id string
				c.Receive(ctx, &id)
				delete(r.running, id)
				if r.recheck[id] {
					// Settled, and replayed meanwhile: its replay is still to be delivered.
					delete(r.recheck, id)
					err = r.startPending(ctx, models.TriggerManual)
				}
			})
			sel.AddReceive(replays, func(c workflow.ReceiveChannel, _ bool) {
				c.Receive(ctx, nil)
				drain(c)
				err = r.startPending(ctx, models.TriggerManual)
			})
			sel.Select(ctx)
		}
		if err != nil {
			return err
		}
		if !drain(replays) {
			return r.result()
		}
		if err := r.startPending(ctx, models.TriggerManual); err != nil {
			return err
		}
		if len(r.running) == 0 {
			return r.result()
		}
	}
}

// drain empties the signal channel and tells whether it held anything.
func drain(c workflow.ReceiveChannel) bool {
	got := false
	for c.ReceiveAsync(nil) {
		got = true
	}
	return got
}

// startPending asks the database for the event's pending deliveries and starts them.
func (r *fanout) startPending(ctx workflow.Context, trigger string) error {
	var a *activities.Delivery
	var pending []models.PendingDelivery
	bctx := workflow.WithPriority(workflow.WithActivityOptions(ctx, bookkeeping), priorityOf(r.in))
	if err := workflow.ExecuteActivity(bctx, a.PendingDeliveries, activities.PendingInput{EventID: r.in.EventID}).Get(bctx, &pending); err != nil {
		return fmt.Errorf("pending deliveries: %w", err)
	}
	r.start(ctx, pending, trigger)
	return nil
}

// start starts a series for each delivery not already running here. One running here
// whose series has failed may have been replayed before the series settled: it is looked
// up again once the series has settled (recheck).
func (r *fanout) start(ctx workflow.Context, pending []models.PendingDelivery, trigger string) {
	for _, d := range pending {
		if cur, ok := r.running[d.ID]; ok {
			if replayedSince(cur, d) && workflow.GetVersion(ctx, changeRecheckReplayed, workflow.DefaultVersion, 1) == 1 {
				r.recheck[d.ID] = true
			}
			continue
		}
		r.running[d.ID] = d
		workflow.Go(ctx, func(ctx workflow.Context) {
			r.ended(d.ID, r.deliver(ctx, d, trigger))
			r.done.Send(ctx, d.ID)
		})
	}
}

// replayedSince tells whether pending, read now, is a replay of the delivery made after
// its running series read it (cur): a higher replay count, or no count to compare (read
// by an earlier release). Equal counts: the series' own pending state, before its first
// attempt was recorded.
func replayedSince(cur, pending models.PendingDelivery) bool {
	return cur.Replays == nil || pending.Replays == nil || *pending.Replays != *cur.Replays
}

// deliver runs one delivery's DeliverWebhook series under the delivery's own retry
// policy, then settles it: marked failed (which also judges automatic disabling) or its
// unrecorded success recorded.
func (r *fanout) deliver(ctx workflow.Context, d models.PendingDelivery, trigger string) error {
	policy := retryPolicyOf(d.Policy, r.in.RetryInterval)
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: wire.AttemptTimeout,
		RetryPolicy:         policy,
		Priority:            priorityOf(r.in),
	}
	if d.Pace > 0 {
		// CONTRACT §27: the engine paces the endpoint's attempts on a queue of their own,
		// keyed by endpoint. An attempt waiting for its turn is a scheduled activity: no
		// attempt spent, no worker slot held. Histories of earlier releases hold no paced
		// delivery, so their commands are unchanged (and replay matches an activity by id
		// and type, not by queue): no workflow.GetVersion.
		opts.TaskQueue, opts.Priority = wire.PacedTaskQueue, wire.PacedPriority(d.EndpointID, d.Pace)
	}
	actx := workflow.WithActivityOptions(ctx, opts)
	var a *activities.Delivery
	var res activities.DeliverResult
	err := workflow.ExecuteActivity(actx, a.DeliverWebhook, activities.DeliverInput{
		EventID: r.in.EventID, DeliveryID: d.ID, Trigger: trigger, MaxAttempts: policy.MaximumAttempts,
	}).Get(actx, &res)
	mark := activities.MarkFailedInput{EventID: r.in.EventID, DeliveryID: d.ID, Replays: d.Replays}
	// The reason reaches the mark even when the attempt's own record was lost: a gone
	// ending disables its endpoint and is never announced as delivery-exhausted. Only the
	// mark's input changes, which replay does not compare: no version marker.
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case activities.ErrTypeEndpointDisabled:
			mark.Reason = models.DeliveryEndpointDisabled
		case activities.ErrTypeGone:
			mark.Reason = models.DeliveryGone
		}
	}
	return settle(ctx, mark, res, err)
}

// ended notes how a delivery's series ended.
func (r *fanout) ended(id string, err error) {
	if err == nil {
		delete(r.failed, id)
		return
	}
	if _, seen := r.failed[id]; !seen {
		r.failedID = append(r.failedID, id)
	}
	r.failed[id] = err
}

// result is the run's outcome: Failed (CONTRACT §13) when a delivery ended failed, with
// the first such delivery's error as the cause.
func (r *fanout) result() error {
	for _, id := range r.failedID {
		if err, ok := r.failed[id]; ok {
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%d deliveries failed", len(r.failed)), ErrTypeDeliveriesFailed, err)
		}
	}
	return nil
}

// retryPolicyOf is the Temporal retry policy of a delivery: the copy it took of its
// endpoint's, as models.RetryPolicy.Effective makes it run (the default policy at the
// interval fixed in the input).
func retryPolicyOf(p models.RetryPolicy, defaultInterval time.Duration) *temporal.RetryPolicy {
	p = p.Effective(defaultInterval)
	return &temporal.RetryPolicy{
		InitialInterval:    p.InitialInterval(),
		BackoffCoefficient: p.BackoffCoefficient,
		MaximumInterval:    p.MaximumInterval(),
		MaximumAttempts:    int32(p.MaximumAttempts),
	}
}

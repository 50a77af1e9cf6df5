package workflows

import (
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// Activity slots of the jobs and system workers (docs/fairness.md). Both run short
// database work, never a tenant's network wait: a ReplayPage is one transaction of at
// most MaxReplayPage deliveries, a BackfillMeterPage one of about meters.BackfillRows
// usage rows, a bookkeeping activity one row, a purge batch one short transaction;
// their work queues in Temporal, not in the process. A ReplayPage also waits out its
// environment's share of REVOPS_REPLAY_RATE after its commit (up to 20 s, holding its
// slot but no database connection): the jobs worker has slots for 16 environments' two
// jobs each, so one environment's paced jobs do not stall the others'.
const (
	JobsActivitySlots   = 32
	SystemActivitySlots = 8
)

// Activities are the activity structs the workers of a process run.
type Activities struct {
	Delivery      *activities.Delivery
	Retention     *activities.Retention
	BulkReplay    *activities.BulkReplay
	MeterBackfill *activities.MeterBackfill
	MeterPurge    *activities.MeterPurge
	// EndpointDeletion ends deleted endpoints' unfinished deliveries (nil: not on this
	// worker, tests that delete no endpoint).
	EndpointDeletion *activities.EndpointDeletion
	Health           *activities.Health // nil: no health check on this worker (tests)
}

// Workers are the workers of one process, one per task queue (CONTRACT §17).
type Workers []worker.Worker

// NewWorkers builds, unstarted, the workers of one process with opts (whose activity
// slots it sets): revops-webhooks runs deliveries, deliverySlots attempts at a time
// (REVOPS_WORKER_ACTIVITY_SLOTS); revops-jobs bulk replays, meter backfills and purges,
// endpoint deletions;
// revops-system the bookkeeping that settles deliveries and retention; revops-webhooks-
// paced the attempts to paced endpoints, deliverySlots at a time too. revops-webhooks
// keeps every registration of the releases before the three queues (BulkReplay,
// Retention and their activities), so that their runs there drain: a BulkReplay run
// continues as new on its own queue.
func NewWorkers(c client.Client, acts Activities, deliverySlots int, opts worker.Options) Workers {
	webhooks := opts
	webhooks.MaxConcurrentActivityExecutionSize = deliverySlots
	wh := worker.New(c, wire.TaskQueue, webhooks)
	Register(wh, acts.Delivery)
	RegisterRetention(wh, acts.Retention)
	wh.RegisterActivity(acts.BulkReplay)

	jobs := opts
	jobs.MaxConcurrentActivityExecutionSize = JobsActivitySlots
	jw := worker.New(c, wire.JobsTaskQueue, jobs)
	jw.RegisterWorkflowWithOptions(BulkReplay, workflow.RegisterOptions{Name: wire.BulkReplayWorkflowName})
	jw.RegisterActivity(acts.BulkReplay)
	jw.RegisterWorkflowWithOptions(MeterBackfill, workflow.RegisterOptions{Name: wire.MeterBackfillWorkflowName})
	jw.RegisterActivity(acts.MeterBackfill)
	jw.RegisterWorkflowWithOptions(MeterPurge, workflow.RegisterOptions{Name: wire.MeterPurgeWorkflowName})
	jw.RegisterActivity(acts.MeterPurge)
	jw.RegisterWorkflowWithOptions(EndpointDeletion, workflow.RegisterOptions{Name: wire.EndpointDeletionWorkflowName})
	if acts.EndpointDeletion != nil {
		jw.RegisterActivity(acts.EndpointDeletion)
	}

	system := opts
	system.MaxConcurrentActivityExecutionSize = SystemActivitySlots
	sw := worker.New(c, wire.SystemTaskQueue, system)
	RegisterRetention(sw, acts.Retention)
	if acts.Health != nil {
		RegisterHealthCheck(sw, acts.Health)
	}
	// Only MarkDeliveryFailed and RecordDelivered are scheduled here (systemBookkeeping);
	// the struct registers them under the names the workflow uses.
	sw.RegisterActivity(acts.Delivery)

	// Attempts to paced endpoints (CONTRACT §27; only DeliverWebhook is scheduled there,
	// by fanout.go): as many slots as the deliveries' own worker, a pool of their own, so
	// that paced attempts to hanging receivers never hold an unpaced delivery's slot.
	paced := opts
	paced.MaxConcurrentActivityExecutionSize = deliverySlots
	pw := worker.New(c, wire.PacedTaskQueue, paced)
	pw.RegisterActivity(acts.Delivery)
	return Workers{wh, jw, sw, pw}
}

// Start starts every worker; if one fails, it stops those it started (a worker starts
// once: build new ones to try again).
func (ws Workers) Start() error {
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, started := range ws[:i+1] {
				started.Stop()
			}
			return fmt.Errorf("start worker %d of %d: %w", i+1, len(ws), err)
		}
	}
	return nil
}

// Stop stops every worker, each waiting for its activities up to its WorkerStopTimeout.
func (ws Workers) Stop() {
	stopped := make(chan struct{}, len(ws))
	for _, w := range ws {
		go func() { w.Stop(); stopped <- struct{}{} }()
	}
	for range ws {
		<-stopped
	}
}

// Register puts the delivery workflow and its activities on a worker of TaskQueue,
// with BulkReplay's workflow (runs of earlier releases there).
func Register(w worker.Registry, acts *activities.Delivery) {
	registerWebhooksWorkflows(w)
	w.RegisterActivity(acts)
}

// registerWebhooksWorkflows registers the workflows of revops-webhooks under their names.
func registerWebhooksWorkflows(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(WebhookDelivery, workflow.RegisterOptions{Name: wire.WorkflowName})
	w.RegisterWorkflowWithOptions(BulkReplay, workflow.RegisterOptions{Name: wire.BulkReplayWorkflowName})
}

// RegisterWorkflows registers every workflow a recorded history may hold under its name,
// for the replay test of recorded histories (a WorkflowReplayer has no activities and no
// task queue). MeterBackfill, MeterPurge and EndpointDeletion run only on revops-jobs, so
// revops-webhooks goes without them.
func RegisterWorkflows(w worker.WorkflowRegistry) {
	registerWebhooksWorkflows(w)
	w.RegisterWorkflowWithOptions(MeterBackfill, workflow.RegisterOptions{Name: wire.MeterBackfillWorkflowName})
	w.RegisterWorkflowWithOptions(MeterPurge, workflow.RegisterOptions{Name: wire.MeterPurgeWorkflowName})
	w.RegisterWorkflowWithOptions(EndpointDeletion, workflow.RegisterOptions{Name: wire.EndpointDeletionWorkflowName})
}

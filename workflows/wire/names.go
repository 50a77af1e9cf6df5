// Package wire is what the starters (internal/dispatch, temporal-setup), the workers
// (workflows) and the tests share about Temporal runs: task queues, workflow types, ids,
// search attributes, signals, the inputs and results that travel in histories, and the
// priorities runs start with. It imports only models, so that a starter does not sit on
// top of the workflow code and its activities.
package wire

import enumspb "go.temporal.io/api/enums/v1"

// Every name below is recorded in workflow histories or registered in the Temporal
// namespace: changing one breaks the replay of running workflows (testdata/histories)
// or the starts of deployed releases. Add names; never rename them.

// Task queues (CONTRACT §17). Each has its own worker in every worker process, so that
// no kind of work waits for another's slots.
const (
	// TaskQueue is where webhook deliveries run. Bulk replays and retention runs started
	// by releases before the three queues ran here too: its worker keeps them registered
	// until they drain.
	TaskQueue = "revops-webhooks"
	// JobsTaskQueue is the work tenants cause besides deliveries (bulk replays, meter
	// backfills and purges, endpoint deletions), fair by environment like deliveries
	// (JobsPriority).
	JobsTaskQueue = "revops-jobs"
	// SystemTaskQueue is the work that keeps the service healthy (marking deliveries
	// failed, recording late successes, retention): it never waits for a tenant's slot.
	SystemTaskQueue = "revops-system"
	// PacedTaskQueue is where attempts to paced endpoints run (CONTRACT §27), each under
	// its endpoint's fairness key (PacedPriority): Temporal limits every key to the
	// queue's default per-key rate (PacedKeyRate) times the key's weight override, its
	// endpoint's rate. Only DeliverWebhook runs there; its worker is in every process.
	PacedTaskQueue = "revops-webhooks-paced"
)

// Registered workflow types.
const (
	// WorkflowName is the delivery workflow (CONTRACT §10).
	WorkflowName = "WebhookDelivery"
	// BulkReplayWorkflowName is the workflow of a bulk replay job (CONTRACT §16).
	BulkReplayWorkflowName = "BulkReplay"
	// RetentionWorkflowName is the workflow the retention Schedule runs (CONTRACT §16).
	RetentionWorkflowName = "Retention"
	// MeterBackfillWorkflowName is the workflow that counts a new meter's older usage
	// rows (CONTRACT §18).
	MeterBackfillWorkflowName = "MeterBackfill"
	// MeterPurgeWorkflowName is the workflow that purges a deleted meter's figures
	// (CONTRACT §21).
	MeterPurgeWorkflowName = "MeterPurge"
	// EndpointDeletionWorkflowName is the workflow that ends a deleted webhook endpoint's
	// unfinished deliveries skipped (CONTRACT §13, §21).
	EndpointDeletionWorkflowName = "EndpointDeletion"
	// HealthCheckWorkflowName is the workflow the endpoint health Schedule runs every
	// minute (CONTRACT §23).
	HealthCheckWorkflowName = "EndpointHealthCheck"
)

// SignalReplay is the signal the dispatcher sends with SignalWithStart after a replay
// (CONTRACT §13): the open run starts the event's pending deliveries it is not running.
const SignalReplay = "replay"

// WorkflowID is the id of the delivery workflow of one event.
func WorkflowID(eventID string) string { return "webhook-" + eventID }

// BulkReplayWorkflowID is the id of a replay job's workflow.
func BulkReplayWorkflowID(jobID string) string { return "replay-job-" + jobID }

// MeterBackfillWorkflowID is the id of a meter's backfill workflow: one per meter, ever.
func MeterBackfillWorkflowID(meterID string) string { return "meter-backfill-" + meterID }

// MeterPurgeWorkflowID is the id of a deleted meter's purge workflow: one per meter, ever.
func MeterPurgeWorkflowID(meterID string) string { return "meter-purge-" + meterID }

// EndpointDeletionWorkflowID is the id of a deleted endpoint's deletion workflow: one per
// endpoint, ever.
func EndpointDeletionWorkflowID(endpointID string) string { return "endpoint-deletion-" + endpointID }

// Retention runs on a Temporal Schedule (CONTRACT §16).
const (
	RetentionScheduleID = "revops-retention"
	// RetentionWorkflowID is the id of each scheduled run (the Schedule appends the time).
	RetentionWorkflowID = "revops-retention"
	// HealthCheckScheduleID runs the endpoint health check every minute (CONTRACT §23).
	HealthCheckScheduleID = "revops-endpoint-health"
	// HealthCheckWorkflowID is the id of each scheduled run (the Schedule appends the time).
	HealthCheckWorkflowID = "revops-endpoint-health"
)

// Search attributes set on every delivery run (CONTRACT §10), all of Keyword type.
const (
	AttrEventType      = "RevopsEventType"
	AttrObjectID       = "RevopsObjectId"
	AttrEnvironment    = "RevopsEnvironment"
	AttrOrganizationID = "RevopsOrganizationId"
)

// AttrEndpointIDs is the keyword-list search attribute naming the endpoints a run
// delivers to (CONTRACT §13), set in the start options.
const AttrEndpointIDs = "RevopsEndpointIds"

// SearchAttributes lists the Keyword attributes the Temporal namespace must have.
var SearchAttributes = []string{AttrEventType, AttrObjectID, AttrEnvironment, AttrOrganizationID}

// SearchAttributeTypes is every attribute the namespace must have (CONTRACT §10, §13),
// with its type: `revops temporal-setup` and `revops dev` register exactly these. A test
// checks it covers SearchAttributes.
var SearchAttributeTypes = map[string]enumspb.IndexedValueType{
	AttrEventType:      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrObjectID:       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrEnvironment:    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrOrganizationID: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrEndpointIDs:    enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST,
}

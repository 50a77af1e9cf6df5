package workflows

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
)

// Register puts the delivery workflow and its activities on a worker of TaskQueue.
func Register(w worker.Registry, acts *activities.Activities) {
	RegisterWorkflows(w)
	w.RegisterActivity(acts)
}

// RegisterWorkflows registers the workflows under their names; the worker and the
// replay test of recorded histories (a WorkflowReplayer has no activities) share it.
func RegisterWorkflows(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(WebhookDelivery, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterWorkflowWithOptions(BulkReplay, workflow.RegisterOptions{Name: BulkReplayWorkflowName})
}

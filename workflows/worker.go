package workflows

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
)

// Register puts the delivery workflow and its activities on a worker of TaskQueue.
func Register(w worker.Registry, acts *activities.Activities) {
	w.RegisterWorkflowWithOptions(WebhookDelivery, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivity(acts)
}

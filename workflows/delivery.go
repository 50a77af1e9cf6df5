package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
)

// WorkflowName is the registered type of the delivery workflow (CONTRACT §10).
const WorkflowName = "WebhookDelivery"

// Delivery limits (CONTRACT §8/§10).
const (
	DefaultRetryInterval = time.Hour
	MaxAttempts          = 6 // 1 attempt + 5 retries
	AttemptTimeout       = 30 * time.Second
)

// DeliveryInput starts the delivery of one event. It carries ids and names only: the
// body and the signing secrets are read by the activity, so they never enter history.
type DeliveryInput struct {
	EventID        string
	Type           string
	ObjectID       string
	Environment    string
	OrganizationID string
	Trigger        string // models.TriggerScheduled or models.TriggerManual
	// RetryInterval is the time between attempts, fixed at start so that replays of the
	// history stay deterministic; zero means DefaultRetryInterval.
	RetryInterval time.Duration
}

// WebhookDelivery delivers one event: one activity, retried hourly up to six attempts.
// A delivery that ends failed returns the error, so the run ends Failed in the UI.
func WebhookDelivery(ctx workflow.Context, in DeliveryInput) error {
	interval := in.RetryInterval
	if interval <= 0 {
		interval = DefaultRetryInterval
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: AttemptTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    interval,
			BackoffCoefficient: 1.0,
			MaximumInterval:    interval,
			MaximumAttempts:    MaxAttempts,
		},
	})
	var a *activities.Activities
	return workflow.ExecuteActivity(ctx, a.DeliverWebhook, activities.DeliverInput{
		EventID: in.EventID, Trigger: in.Trigger, MaxAttempts: MaxAttempts,
	}).Get(ctx, nil)
}

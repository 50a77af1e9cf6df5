package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// The endpoint health check (CONTRACT §23): every minute, announce the failing spells
// no attempt has judged yet and the delivery-exhausted minutes that have ended.
const (
	// HealthCheckBatch is the endpoints one activity looks at, each in its own short
	// transaction (CONTRACT §21).
	HealthCheckBatch = 200
	// healthPassesPerRun bounds one run: what is left waits for the next minute.
	healthPassesPerRun = 10
)

// healthOptions: a pass is short; a database away is retried until the next minute's run.
var healthOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 20 * time.Second, MaximumAttempts: 5,
	},
}

// HealthCheck runs passes of the check until one comes back short, at most
// healthPassesPerRun of them.
func HealthCheck(ctx workflow.Context, _ wire.HealthCheckInput) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, healthOptions)
	var h *activities.Health
	checked := 0
	for pass := 0; pass < healthPassesPerRun; pass++ {
		var out activities.HealthCheckResult
		if err := workflow.ExecuteActivity(ctx, h.CheckHealth, activities.HealthCheckPass{Limit: HealthCheckBatch}).Get(ctx, &out); err != nil {
			return checked, err
		}
		checked += out.Endpoints
		if out.Endpoints < HealthCheckBatch {
			break
		}
	}
	return checked, nil
}

// RegisterHealthCheck puts the health check workflow and its activity on a worker.
func RegisterHealthCheck(w worker.Registry, acts *activities.Health) {
	w.RegisterWorkflowWithOptions(HealthCheck, workflow.RegisterOptions{Name: wire.HealthCheckWorkflowName})
	w.RegisterActivity(acts)
}

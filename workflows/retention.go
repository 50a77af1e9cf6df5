package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// Period and bounds of retention (CONTRACT §16).
const (
	// MinRetention is the longest retry schedule (§13): nothing younger may be purged.
	MinRetention = 168 * time.Hour
	// IdempotencyRetention is how long idempotency records are kept (§14).
	IdempotencyRetention = 24 * time.Hour
	// PurgeBatch is the rows one activity deletes in one short transaction.
	PurgeBatch = 1000
	// batchesPerRun bounds a run's history: past it the workflow continues as new.
	batchesPerRun = 500
)

// purgeOptions: each batch is a short transaction; a database away is retried without end
// (the next scheduled run is skipped while this one still goes).
var purgeOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:        5 * time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        5 * time.Minute,
		NonRetryableErrorTypes: []string{"BadPurgeInput"},
	},
}

// Retention deletes, batch by batch, events older than the retention with their
// deliveries and attempts, finished replay jobs as old, and expired idempotency records.
// Usage is never purged.
func Retention(ctx workflow.Context, in wire.RetentionInput) (wire.RetentionResult, error) {
	if in.Retention < MinRetention {
		return wire.RetentionResult{}, temporal.NewNonRetryableApplicationError(
			"retention "+in.Retention.String()+" is below "+MinRetention.String()+", the longest retry schedule", "BadRetention", nil)
	}
	if in.Now.IsZero() {
		in.Now = workflow.Now(ctx).UTC()
	}
	ctx = workflow.WithActivityOptions(ctx, purgeOptions)
	var r *activities.Retention
	res := wire.RetentionResult{Deleted: map[string]int64{}}
	targets := []activities.PurgeInput{
		{Target: activities.PurgeEvents, Before: in.Now.Add(-in.Retention), Limit: PurgeBatch},
		{Target: activities.PurgeReplayJobs, Before: in.Now.Add(-in.Retention), Limit: PurgeBatch},
		{Target: activities.PurgeIdempotency, Before: in.Now.Add(-IdempotencyRetention), Limit: PurgeBatch},
	}
	batches := 0
	for _, t := range targets {
		if slices.Contains(in.Done, t.Target) {
			continue
		}
		for {
			if batches == batchesPerRun {
				return res, workflow.NewContinueAsNewError(ctx, wire.RetentionWorkflowName, in)
			}
			var out activities.PurgeResult
			if err := workflow.ExecuteActivity(ctx, r.PurgeBatch, t).Get(ctx, &out); err != nil {
				return res, err
			}
			batches++
			for table, n := range out.Deleted {
				res.Deleted[table] += n
			}
			if out.Rows < t.Limit {
				break
			}
		}
		in.Done = append(in.Done, t.Target)
	}
	return res, nil
}

// RegisterRetention puts the retention workflow and its activities on a worker.
func RegisterRetention(w worker.Registry, acts *activities.Retention) {
	w.RegisterWorkflowWithOptions(Retention, workflow.RegisterOptions{Name: wire.RetentionWorkflowName})
	w.RegisterActivity(acts)
}

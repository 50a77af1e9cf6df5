package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/workflows/wire"
)

// untilDone is the options of an activity that must end as the run asked (a page of a
// job, a delivery's bookkeeping): a worker that died with it is noticed after
// startToClose; a database or worker away is retried without end, from a second apart
// to at most a minute apart; only the error types of permanent faults (nonRetryable)
// end it.
func untilDone(startToClose time.Duration, nonRetryable ...string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: startToClose,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			NonRetryableErrorTypes: nonRetryable,
		},
	}
}

// pageOptions: a page of a tenant's cleanup job (MeterPurge, EndpointDeletion) is a few
// short statements (a page cut anywhere is run again and does what is left).
var pageOptions = untilDone(30 * time.Second)

// pageCounts are what a paged job did, over all its runs.
type pageCounts struct{ Pages, Rows int }

// runPages runs a cleanup job of environment envID (CONTRACT §21): the page activity
// with input act, one bounded page at a time, until a page reports it found nothing
// more, then the end activity once; c counts them. Past perRun pages of this run it
// returns again(ctx) instead (a continue-as-new with the counts so far), so that a run's
// history stays bounded. Every page is fair by envID on revops-jobs (CONTRACT §17),
// whoever started the run. The page activity answers {Rows, Done}.
func runPages(ctx workflow.Context, envID string, perRun int, c *pageCounts, page, end, act any, again func(workflow.Context) error) error {
	ctx = workflow.WithActivityOptions(ctx, pageOptions)
	ctx = workflow.WithPriority(ctx, wire.JobsPriority(envID))
	for pages := 0; ; pages++ {
		if pages == perRun {
			return again(ctx)
		}
		var out struct {
			Rows int
			Done bool
		}
		if err := workflow.ExecuteActivity(ctx, page, act).Get(ctx, &out); err != nil {
			return err
		}
		c.Pages, c.Rows = c.Pages+1, c.Rows+out.Rows
		if out.Done {
			return workflow.ExecuteActivity(ctx, end, act).Get(ctx, nil)
		}
	}
}

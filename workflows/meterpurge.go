package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
)

// meterPurgePagesPerRun bounds a run's history (about six events a page): past it the
// workflow continues as new. At meters.PurgeRows rows a page, a run deletes 1.5M rows.
const meterPurgePagesPerRun = 300

// MeterPurgeInput is the deleted meter and, for a run that continued as new, how far the
// runs before it went (counts for the result; what is left is in the database).
// EnvironmentID is the fairness key of every page.
type MeterPurgeInput struct {
	MeterID       string
	EnvironmentID string
	Pages         int `json:",omitempty"`
	Rows          int `json:",omitempty"`
}

// MeterPurgeResult is what the purge deleted, over all its runs.
type MeterPurgeResult struct {
	Pages, Rows int
}

// meterPurgeOptions: a page is a few short statements (meters.PurgeRows rows), so a
// worker that died with it is noticed after 30 s; a database or worker away is retried
// without end, at most a minute apart (a page cut anywhere is run again and deletes what
// is left).
var meterPurgeOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    time.Minute,
	},
}

// MeterPurge deletes a deleted meter's figures (CONTRACT §21), one bounded page per
// PurgeMeterPage activity until nothing is left, then its purge row (EndMeterPurge), which
// frees its slot among the environment's 32 meters.
func MeterPurge(ctx workflow.Context, in MeterPurgeInput) (MeterPurgeResult, error) {
	ctx = workflow.WithActivityOptions(ctx, meterPurgeOptions)
	// Set on every page, not inherited from the run: the page is fair by its meter's
	// environment on revops-jobs (CONTRACT §17) whoever started the run.
	ctx = workflow.WithPriority(ctx, JobsPriority(in.EnvironmentID))
	var p *activities.MeterPurge
	act := activities.MeterPurgeInput{MeterID: in.MeterID}
	for pages := 0; ; pages++ {
		if pages == meterPurgePagesPerRun {
			return MeterPurgeResult{Pages: in.Pages, Rows: in.Rows},
				workflow.NewContinueAsNewError(ctx, MeterPurgeWorkflowName, in)
		}
		var out activities.MeterPurgePageOutput
		if err := workflow.ExecuteActivity(ctx, p.PurgeMeterPage, act).Get(ctx, &out); err != nil {
			return MeterPurgeResult{Pages: in.Pages, Rows: in.Rows}, err
		}
		in.Pages, in.Rows = in.Pages+1, in.Rows+out.Rows
		if out.Done {
			break
		}
	}
	err := workflow.ExecuteActivity(ctx, p.EndMeterPurge, act).Get(ctx, nil)
	return MeterPurgeResult{Pages: in.Pages, Rows: in.Rows}, err
}

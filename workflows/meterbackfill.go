package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// meterBackfillPagesPerRun bounds a run's history (about six events a page): past it the
// workflow continues as new. At meters.BackfillRows rows a page, a run counts 1.5M rows.
const meterBackfillPagesPerRun = 300

// meterBackfillPageOptions: a page is one short transaction (meters.BackfillRows rows),
// so a worker that died with it is noticed after 30 s; a database or worker away is
// retried without end, at most a minute apart (a page cut anywhere committed nothing,
// so running it again counts each row once). A deleted meter is not retried.
var meterBackfillPageOptions = untilDone(30*time.Second, activities.ErrTypeMeterMissing)

// MeterBackfill counts a new meter's older usage rows into it (CONTRACT §18), one page
// per BackfillMeterPage activity until the meter is ready. The database decides each
// page and keeps the progress, so the workflow carries only counts.
func MeterBackfill(ctx workflow.Context, in wire.MeterBackfillInput) (wire.MeterBackfillResult, error) {
	ctx = workflow.WithActivityOptions(ctx, meterBackfillPageOptions)
	// Set on every page, not inherited from the run: the page is fair by its meter's
	// environment on revops-jobs (CONTRACT §17) whoever started the run.
	ctx = workflow.WithPriority(ctx, wire.JobsPriority(in.EnvironmentID))
	var b *activities.MeterBackfill
	for pages := 0; ; pages++ {
		if pages == meterBackfillPagesPerRun {
			return wire.MeterBackfillResult{Pages: in.Pages, Rows: in.Rows},
				workflow.NewContinueAsNewError(ctx, wire.MeterBackfillWorkflowName, in)
		}
		var out activities.MeterBackfillPageOutput
		err := workflow.ExecuteActivity(ctx, b.BackfillMeterPage, activities.MeterBackfillPageInput{MeterID: in.MeterID}).Get(ctx, &out)
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeMeterMissing {
			// Deleted: its figures are gone with it, nothing is left to count.
			return wire.MeterBackfillResult{Pages: in.Pages, Rows: in.Rows, Deleted: true}, nil
		}
		if err != nil {
			return wire.MeterBackfillResult{Pages: in.Pages, Rows: in.Rows}, err
		}
		in.Pages, in.Rows = in.Pages+1, in.Rows+out.Rows
		if out.Done {
			return wire.MeterBackfillResult{Pages: in.Pages, Rows: in.Rows}, nil
		}
	}
}

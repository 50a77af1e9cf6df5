package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// Bounds of bulk replay (CONTRACT §16).
const (
	// replayPagesPerRun bounds a run's history: past it the workflow continues as new.
	replayPagesPerRun = 300
)

// replayPageOptions: a page is one short transaction, so a worker that died with it is
// noticed after 30 s; a database or worker away is retried without end (a retried page
// replays nothing twice: replay.Page).
var replayPageOptions = untilDone(30*time.Second, activities.ErrTypeReplayJobMissing)

// BulkReplay replays a job's deliveries page by page: each ReplayPage activity replays a
// page and advances the job's row in one transaction and returns the next cursor; the
// workflow keeps the count and waits between pages so that no more than Rate deliveries
// per second are replayed.
func BulkReplay(ctx workflow.Context, in wire.BulkReplayInput) (wire.BulkReplayResult, error) {
	if in.Rate <= 0 {
		in.Rate = wire.DefaultReplayRate
	}
	if in.PageSize <= 0 {
		in.PageSize = wire.ReplayPageSize(in.Rate)
	}
	ctx = workflow.WithActivityOptions(ctx, replayPageOptions)
	var b *activities.BulkReplay
	for pages := 0; ; pages++ {
		if pages == replayPagesPerRun {
			return wire.BulkReplayResult{Replayed: in.Replayed, Failed: in.Failed},
				workflow.NewContinueAsNewError(ctx, wire.BulkReplayWorkflowName, in)
		}
		began := workflow.Now(ctx)
		var out activities.ReplayPageOutput
		err := workflow.ExecuteActivity(ctx, b.ReplayPage, activities.ReplayPageInput{JobID: in.JobID, CursorID: in.CursorID, Limit: in.PageSize}).Get(ctx, &out)
		if err != nil {
			return wire.BulkReplayResult{Replayed: in.Replayed, Failed: in.Failed}, err
		}
		in.CursorID, in.Replayed, in.Failed = out.CursorID, out.TotalReplayed, out.TotalFailed
		if out.Done {
			return wire.BulkReplayResult{Matched: out.Matched, Replayed: in.Replayed, Failed: in.Failed}, nil
		}
		n := out.Replayed + out.Failed
		wait := time.Duration(float64(n)/in.Rate*float64(time.Second)) - workflow.Now(ctx).Sub(began)
		if wait > 0 {
			if err := workflow.Sleep(ctx, wait); err != nil {
				return wire.BulkReplayResult{Replayed: in.Replayed, Failed: in.Failed}, err
			}
		}
	}
}

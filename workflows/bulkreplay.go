package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
)

// Bounds of bulk replay (CONTRACT §16).
const (
	// DefaultReplayRate is REVOPS_REPLAY_RATE's default, in deliveries per second.
	DefaultReplayRate = 50
	// MaxReplayPage bounds a page: one short transaction.
	MaxReplayPage = 100
	// replayPagesPerRun bounds a run's history: past it the workflow continues as new.
	replayPagesPerRun = 300
)

// BulkReplayInput is the job to run, its pace (fixed at start, so that a change of
// REVOPS_REPLAY_RATE never changes a running workflow's commands), and where it stands:
// a run that continues as new carries the cursor and counts on.
type BulkReplayInput struct {
	JobID    string
	Rate     float64 // deliveries per second at most
	PageSize int     // deliveries per page
	CursorID string  `json:",omitempty"`
	Replayed int     `json:",omitempty"`
	Failed   int     `json:",omitempty"`
}

// BulkReplayResult is the job's final count, as its row has it.
type BulkReplayResult struct {
	Matched, Replayed, Failed int
}

// ReplayPageSize is the page of a job replaying at rate deliveries per second: about one
// second's worth, so the pace is even, within 1..MaxReplayPage.
func ReplayPageSize(rate float64) int {
	return max(1, min(MaxReplayPage, int(rate)))
}

// replayPageOptions: a page is one short transaction, so a worker that died with it is
// noticed after 30 s; a database or worker away is retried without end (a retried page
// replays nothing twice: replay.Page).
var replayPageOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        time.Minute,
		NonRetryableErrorTypes: []string{activities.ErrTypeReplayJobMissing},
	},
}

// BulkReplay replays a job's deliveries page by page: each ReplayPage activity replays a
// page and advances the job's row in one transaction and returns the next cursor; the
// workflow keeps the count and waits between pages so that no more than Rate deliveries
// per second are replayed.
func BulkReplay(ctx workflow.Context, in BulkReplayInput) (BulkReplayResult, error) {
	if in.Rate <= 0 {
		in.Rate = DefaultReplayRate
	}
	if in.PageSize <= 0 {
		in.PageSize = ReplayPageSize(in.Rate)
	}
	ctx = workflow.WithActivityOptions(ctx, replayPageOptions)
	var b *activities.BulkReplay
	for pages := 0; ; pages++ {
		if pages == replayPagesPerRun {
			return BulkReplayResult{Replayed: in.Replayed, Failed: in.Failed},
				workflow.NewContinueAsNewError(ctx, BulkReplayWorkflowName, in)
		}
		began := workflow.Now(ctx)
		var out activities.ReplayPageOutput
		err := workflow.ExecuteActivity(ctx, b.ReplayPage, activities.ReplayPageInput{JobID: in.JobID, CursorID: in.CursorID, Limit: in.PageSize}).Get(ctx, &out)
		if err != nil {
			return BulkReplayResult{Replayed: in.Replayed, Failed: in.Failed}, err
		}
		in.CursorID, in.Replayed, in.Failed = out.CursorID, out.TotalReplayed, out.TotalFailed
		if out.Done {
			return BulkReplayResult{Matched: out.Matched, Replayed: in.Replayed, Failed: in.Failed}, nil
		}
		n := out.Replayed + out.Failed
		wait := time.Duration(float64(n)/in.Rate*float64(time.Second)) - workflow.Now(ctx).Sub(began)
		if wait > 0 {
			if err := workflow.Sleep(ctx, wait); err != nil {
				return BulkReplayResult{Replayed: in.Replayed, Failed: in.Failed}, err
			}
		}
	}
}

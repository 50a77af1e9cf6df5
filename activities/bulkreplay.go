package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/platform/apperr"
)

// ErrTypeReplayJobMissing: the job's row is gone (purged, or another database).
const ErrTypeReplayJobMissing = "replay_job_not_found"

// maxPaceHold bounds how long a page's activity lasts for its pacing, well within the
// page's 30 s StartToCloseTimeout (workflows.replayPageOptions).
const maxPaceHold = 20 * time.Second

// BulkReplayStore is what the bulk replay activity needs of the store: what its pages
// need (replay.Page).
type BulkReplayStore = replay.PageStore

// Pager replays one page of a bulk replay job: replay.Page over the store, or a test's
// stand-in.
type Pager interface {
	ReplayPage(ctx context.Context, jobID, cursorID string, limit int) (replay.PageResult, error)
}

// storePages is replay.Page over a store: the Pager of a running worker.
type storePages struct{ st BulkReplayStore }

func (p storePages) ReplayPage(ctx context.Context, jobID, cursorID string, limit int) (replay.PageResult, error) {
	return replay.Page(ctx, p.st, jobID, cursorID, limit)
}

// BulkReplay holds the bulk replay activity's dependencies.
type BulkReplay struct {
	Store BulkReplayStore
	// Pages, when set, replays the pages instead of replay.Page over Store (a test's
	// stand-in).
	// The page's replayed events reach their workflows right after its commit, as every
	// transaction's (store.AfterCommit); the sweeper reaches whatever that misses.
	Pages Pager
	// Rate is REVOPS_REPLAY_RATE, the deliveries per second an environment's jobs start
	// all together (CONTRACT §17); 0: each job keeps only its workflow's own pace.
	Rate float64
	// hold waits d or until ctx ends (nil: a timer); a test records the hold instead.
	hold func(ctx context.Context, d time.Duration)
}

// ReplayPageInput names the page: the one after CursorID ("" for the first) of the job.
type ReplayPageInput struct {
	JobID    string
	CursorID string
	Limit    int
}

// ReplayPageOutput is what the page did and where the job's row stands after it. Only ids
// and counts: the workflow history never holds a payload.
type ReplayPageOutput struct {
	Replayed, Failed                    int // this page's; 0 when it had been done already
	TotalReplayed, TotalFailed, Matched int
	CursorID                            string
	Done                                bool
}

// ReplayPage replays one page of a bulk replay job and advances the job's row, in one
// transaction (replay.Page): a retry after a crash replays nothing twice. A panic ends
// the page alone (ErrTypePanic).
func (b *BulkReplay) ReplayPage(ctx context.Context, in ReplayPageInput) (ReplayPageOutput, error) {
	return guardedPage(ctx, "replay_page", func() (ReplayPageOutput, error) { return b.replayPage(ctx, in) }, "job_id", in.JobID)
}

func (b *BulkReplay) replayPage(ctx context.Context, in ReplayPageInput) (ReplayPageOutput, error) {
	began := time.Now()
	r, err := b.pages().ReplayPage(ctx, in.JobID, in.CursorID, in.Limit)
	if errors.Is(err, apperr.ErrNotFound) {
		return ReplayPageOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("replay job %s not found", in.JobID), ErrTypeReplayJobMissing, err)
	}
	if err != nil {
		return ReplayPageOutput{}, fmt.Errorf("replay page: %w", err)
	}
	if !r.Done {
		b.pace(ctx, began, r.Replayed+r.Failed, r.Running)
	}
	return ReplayPageOutput{Replayed: r.Replayed, Failed: r.Failed, TotalReplayed: r.TotalReplayed,
		TotalFailed: r.TotalFailed, Matched: r.Matched, CursorID: r.CursorID, Done: r.Done}, nil
}

func (b *BulkReplay) pages() Pager {
	if b.Pages != nil {
		return b.Pages
	}
	return storePages{b.Store}
}

// pace holds the page's activity so that the environment's running jobs together start
// at most Rate deliveries a second (CONTRACT §17): with k jobs running (read in the
// page's transaction), a page of n deliveries lasts at least k·n/Rate. The workflow then
// waits only what is left of its own n/Rate (it measures from the page's start), so one
// job alone keeps exactly its workflow's pace, and no workflow code changes: runs started
// before this release pace the same way.
func (b *BulkReplay) pace(ctx context.Context, began time.Time, n, running int) {
	if b.Rate <= 0 || running <= 1 || n == 0 {
		return
	}
	hold := min(time.Duration(float64(n*running)/b.Rate*float64(time.Second)), maxPaceHold) - time.Since(began)
	if d, ok := ctx.Deadline(); ok {
		hold = min(hold, time.Until(d)-time.Second)
	}
	if hold <= 0 {
		return
	}
	if b.hold != nil {
		b.hold(ctx, hold)
		return
	}
	t := time.NewTimer(hold)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

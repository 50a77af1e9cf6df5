package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// ErrTypeReplayJobMissing: the job's row is gone (purged, or another database).
const ErrTypeReplayJobMissing = "replay_job_not_found"

// dispatchBound is how long a page's activity spends reaching its events' workflows.
const dispatchBound = 10 * time.Second

// BulkReplayStore is what the bulk replay activity needs of the store.
type BulkReplayStore interface {
	ReplayPage(ctx context.Context, jobID, cursorID string, limit int) (store.ReplayPageResult, error)
}

var _ BulkReplayStore = (*store.Store)(nil)

// EventDispatcher reaches the workflows of replayed events (dispatch.Starter.Dispatch).
type EventDispatcher interface {
	Dispatch(ctx context.Context, events []models.Event)
}

// BulkReplay holds the bulk replay activity's dependencies.
type BulkReplay struct {
	Store BulkReplayStore
	// Dispatch, when set, reaches the page's events right after its commit; the sweeper
	// reaches whatever it could not (they stay marked for redispatch).
	Dispatch EventDispatcher
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
// transaction (store.ReplayPage): a retry after a crash replays nothing twice.
func (b *BulkReplay) ReplayPage(ctx context.Context, in ReplayPageInput) (ReplayPageOutput, error) {
	r, err := b.Store.ReplayPage(ctx, in.JobID, in.CursorID, in.Limit)
	if errors.Is(err, apperr.ErrNotFound) {
		return ReplayPageOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("replay job %s not found", in.JobID), ErrTypeReplayJobMissing, err)
	}
	if err != nil {
		return ReplayPageOutput{}, fmt.Errorf("replay page: %w", err)
	}
	if b.Dispatch != nil && len(r.Events) > 0 {
		// Bounded well within the page's timeout: the sweeper reaches the rest.
		dctx, cancel := context.WithTimeout(ctx, dispatchBound)
		b.Dispatch.Dispatch(dctx, r.Events)
		cancel()
	}
	return ReplayPageOutput{Replayed: r.Replayed, Failed: r.Failed, TotalReplayed: r.TotalReplayed,
		TotalFailed: r.TotalFailed, Matched: r.Matched, CursorID: r.CursorID, Done: r.Done}, nil
}

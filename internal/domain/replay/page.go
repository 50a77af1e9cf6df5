package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// PageStore is what a bulk replay's pages need of the database (the jobs' pool).
type PageStore interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	ReplayJobByID(ctx context.Context, id string) (models.ReplayJob, error)
}

var _ PageStore = (*store.Store)(nil)

// PageResult is what one page of a bulk replay did, and where the job stands after it
// (its row's totals and cursor).
type PageResult struct {
	Replayed, Failed int // this page; 0 when the page had already been done
	// The job's row after the page.
	TotalReplayed, TotalFailed, Matched int
	CursorAt                            *time.Time
	CursorID                            string
	Done                                bool
	// Running is how many jobs of the job's environment are running after the page, this
	// one included while it runs: they share REVOPS_REPLAY_RATE (CONTRACT §17). The
	// page's replayed events are handed to the dispatcher by the store once the page has
	// committed (store.AfterCommit), the sweeper reaching whatever that misses.
	Running int
}

// Page replays the next page of a bulk replay job — up to limit matching deliveries
// after the job's cursor, each as Deliveries(event, endpoint) decides — and advances the
// job's cursor and counts, all in ONE transaction: a process killed mid-page did the
// whole page or nothing. The page is the one after cursorID (the cursor the caller
// holds, "" for the first): if the row's cursor has moved on, that page was already done
// by an earlier attempt whose answer was lost, and nothing is replayed again; the row's
// state is returned. A delivery that cannot be replayed (one in progress, its endpoint
// deleted) counts as failed; a database error fails the page. A page shorter than limit
// ends the job.
func Page(ctx context.Context, st PageStore, jobID, cursorID string, limit int) (PageResult, error) {
	// The job's id comes from its workflow: its environment is read first, and never
	// changes.
	job, err := st.ReplayJobByID(ctx, jobID)
	if err != nil {
		return PageResult{}, err
	}
	trace := tracing.TraceParent(ctx)
	var out PageResult
	_, err = st.InTx(ctx, store.JobEnv(job), func(tx *store.Tx) error {
		claimed, err := tx.ClaimReplayPage(jobID, cursorID)
		if err != nil {
			return err
		}
		j, err := tx.ReplayJob(jobID)
		if err != nil {
			return err
		}
		if !claimed {
			out = pageResult(j)
			return nil
		}
		page, err := tx.DeliveriesAfter(store.JobFilter(j), j.CursorAt, j.CursorID, limit)
		if err != nil {
			return fmt.Errorf("page of replay job %s: %w", jobID, err)
		}
		replayed, failed, err := replayPage(tx, jobID, page, trace)
		if err != nil {
			return err
		}
		var last *models.WebhookDelivery
		if len(page) > 0 {
			last = &page[len(page)-1]
		}
		if err := tx.AdvanceReplayJob(jobID, replayed, failed, last, len(page) < limit); err != nil {
			return err
		}
		if j, err = tx.ReplayJob(jobID); err != nil {
			return fmt.Errorf("reload replay job %s: %w", jobID, err)
		}
		running, err := tx.RunningReplayJobs()
		if err != nil {
			return err
		}
		out = pageResult(j)
		out.Replayed, out.Failed, out.Running = replayed, failed, running
		return nil
	})
	if err != nil {
		return PageResult{}, err
	}
	return out, nil
}

// replayPage replays each delivery of a page in tx and counts what was replayed and what
// refused.
func replayPage(tx *store.Tx, jobID string, page []models.WebhookDelivery, trace string) (replayed, failed int, err error) {
	// The page's lanes first, in object order, then its events in page order (CONTRACT
	// §26's lock order): each replay below finds its lane held.
	events := make([]string, len(page))
	for i, d := range page {
		events[i] = d.EventID
	}
	if err := tx.LockEventsLanes(events); err != nil {
		return 0, 0, err
	}
	for _, d := range page {
		// Each replay in a savepoint: a refused one undoes itself and releases the
		// event's lock at once (its delivery is being sent, and its record must not wait
		// for the page), and each replay is stamped after its own lock.
		err := tx.Savepoint(func(tx *store.Tx) error {
			_, err := replayIn(tx, d.EventID, d.EndpointID, trace)
			return err
		})
		switch {
		case err == nil:
			replayed++
		case refused(err):
			failed++
		default:
			return 0, 0, fmt.Errorf("replay job %s: %w", jobID, err)
		}
	}
	return replayed, failed, nil
}

func pageResult(j models.ReplayJob) PageResult {
	return PageResult{TotalReplayed: j.Replayed, TotalFailed: j.Failed, Matched: j.Matched,
		CursorAt: j.CursorAt, CursorID: j.CursorID, Done: j.Status == models.ReplayJobDone}
}

// refused tells a replay the rules refuse (a client-side error: in progress, endpoint
// gone) from a failure of the database.
func refused(err error) bool {
	var c *apperr.ConflictError
	if errors.As(err, &c) || errors.Is(err, apperr.ErrNotFound) {
		return true
	}
	var r *apperr.InvalidError
	return errors.As(err, &r)
}

package activities_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/platform/apperr"
)

type pageStore struct {
	res replay.PageResult
	err error
}

func (p pageStore) ReplayPage(context.Context, string, string, int) (replay.PageResult, error) {
	return p.res, p.err
}

// The page activity returns only counts and the cursor (the page's events reach their
// workflows after its commit, handed over by the store: store's
// TestReplaysHandTheirEventsOver); a job that is gone stops the workflow (non-retryable)
// while a database error is retried.
func TestReplayPageActivity(t *testing.T) {
	for _, tc := range []struct {
		name      string
		store     pageStore
		errType   string // "" no error; "retry" a retryable one
		wantTotal int
	}{
		{name: "page", store: pageStore{res: replay.PageResult{Replayed: 2, TotalReplayed: 7, CursorID: "d7"}}, wantTotal: 7},
		{name: "page done before", store: pageStore{res: replay.PageResult{TotalReplayed: 7, CursorID: "d7", Done: true}}, wantTotal: 7},
		{name: "job gone", store: pageStore{err: fmt.Errorf("replay job j: %w", apperr.ErrNotFound)}, errType: activities.ErrTypeReplayJobMissing},
		{name: "database away", store: pageStore{err: errors.New("connection refused")}, errType: "retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &activities.BulkReplay{Pages: tc.store}
			out, err := b.ReplayPage(context.Background(), activities.ReplayPageInput{JobID: "j", Limit: 50})
			var appErr *temporal.ApplicationError
			switch {
			case tc.errType == "" && err != nil:
				t.Fatal(err)
			case tc.errType == "retry" && (err == nil || errors.As(err, &appErr) && appErr.NonRetryable()):
				t.Fatalf("got %v, want a retryable error", err)
			case tc.errType != "" && tc.errType != "retry" && (!errors.As(err, &appErr) || appErr.Type() != tc.errType || !appErr.NonRetryable()):
				t.Fatalf("got %v, want non-retryable %s", err, tc.errType)
			}
			if out.TotalReplayed != tc.wantTotal {
				t.Errorf("out %+v, want total %d", out, tc.wantTotal)
			}
		})
	}
}

// The environment's running jobs share REVOPS_REPLAY_RATE (CONTRACT §17): with two
// running, a page of 5 deliveries at 50/s lasts at least 2·5/50 s = 200 ms in its
// activity; alone, or on the job's last page, the activity holds nothing (the workflow's
// own wait paces a job alone). The holds are recorded, not waited out.
func TestReplayPageSharesTheRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  replay.PageResult
		page time.Duration // what the page lasts with its hold; 0: no hold
	}{
		{name: "two running", res: replay.PageResult{Replayed: 4, Failed: 1, Running: 2}, page: 200 * time.Millisecond},
		{name: "alone", res: replay.PageResult{Replayed: 5, Running: 1}},
		{name: "last page", res: replay.PageResult{Replayed: 5, Running: 2, Done: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &activities.BulkReplay{Pages: pageStore{res: tc.res}, Rate: 50}
			var holds []time.Duration
			b.HoldWith(func(_ context.Context, d time.Duration) { holds = append(holds, d) })
			began := time.Now()
			if _, err := b.ReplayPage(context.Background(), activities.ReplayPageInput{JobID: "j", Limit: 5}); err != nil {
				t.Fatal(err)
			}
			// The hold is what is left of the page's time after its own work, which took
			// at most as long as the call did here.
			took := time.Since(began)
			switch {
			case tc.page == 0 && len(holds) > 0:
				t.Errorf("page held %v, want no hold", holds)
			case tc.page > 0 && (len(holds) != 1 || holds[0] > tc.page || holds[0] < tc.page-took):
				t.Errorf("page held %v (its work took at most %v), want one hold making it last %v", holds, took, tc.page)
			}
		})
	}
}

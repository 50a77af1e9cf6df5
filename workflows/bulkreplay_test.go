package workflows

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// fakeJob stands for the store's replay job: n deliveries, the cursor is the index of the
// last one replayed, and a page asked at a cursor the row has passed replays nothing
// (store.ReplayPage's rule).
type fakeJob struct {
	n, done  int
	replays  []int // how many times each delivery was replayed
	calls    []activities.ReplayPageInput
	failOnce map[int]bool // calls (by number) whose answer is lost after the commit
}

func (f *fakeJob) page(_ context.Context, in activities.ReplayPageInput) (activities.ReplayPageOutput, error) {
	f.calls = append(f.calls, in)
	at := -1
	if in.CursorID != "" {
		at, _ = strconv.Atoi(in.CursorID)
	}
	out := activities.ReplayPageOutput{Matched: f.n}
	if at == f.done-1 && f.done < f.n || f.done == 0 && at == -1 && f.n > 0 {
		k := min(in.Limit, f.n-f.done)
		for i := f.done; i < f.done+k; i++ {
			f.replays[i]++
		}
		f.done += k
		out.Replayed = k
	}
	out.TotalReplayed = f.done
	if f.done > 0 {
		out.CursorID = strconv.Itoa(f.done - 1)
	}
	out.Done = f.done == f.n && out.Replayed < in.Limit
	if f.failOnce[len(f.calls)] {
		return activities.ReplayPageOutput{}, errors.New("worker killed after the commit")
	}
	return out, nil
}

func bulkEnv(f *fakeJob) *testsuite.TestWorkflowEnvironment {
	var b *activities.BulkReplay
	return jobEnv(BulkReplay, wire.BulkReplayWorkflowName, b.ReplayPage, f.page)
}

func newFakeJob(n int) *fakeJob {
	return &fakeJob{n: n, replays: make([]int, n), failOnce: map[int]bool{}}
}

// Pages at the job's rate: 500 deliveries at 50/s are 10 pages of 50 then an empty
// one, and take 10 s of workflow time (never less: the receivers' rate is a ceiling); at
// 1000/s, pages are capped at 100. Every delivery is replayed once, even when a page's
// answer is lost after its commit and the activity is retried.
func TestBulkReplayPagesAtItsRate(t *testing.T) {
	for _, tc := range []struct {
		name             string
		n                int
		rate             float64
		lost             map[int]bool
		pages, wantLimit int
		wantMin, wantMax time.Duration
	}{
		{name: "500 at 50/s", n: 500, rate: 50, pages: 11, wantLimit: 50, wantMin: 10 * time.Second, wantMax: 10 * time.Second},
		{name: "answer lost", n: 500, rate: 50, lost: map[int]bool{3: true}, pages: 12, wantLimit: 50, wantMin: 10 * time.Second, wantMax: 12 * time.Second},
		{name: "250 at 1000/s", n: 250, rate: 1000, pages: 3, wantLimit: 100, wantMin: 200 * time.Millisecond, wantMax: 200 * time.Millisecond},
		{name: "none", n: 0, rate: 50, pages: 1, wantLimit: 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeJob(tc.n)
			for k, v := range tc.lost {
				f.failOnce[k] = v
			}
			env := bulkEnv(f)
			start := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
			env.SetStartTime(start)
			env.ExecuteWorkflow(wire.BulkReplayWorkflowName, wire.BulkReplayInput{JobID: "job-1", Rate: tc.rate, PageSize: wire.ReplayPageSize(tc.rate)})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var res wire.BulkReplayResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if res.Replayed != tc.n || res.Matched != tc.n {
				t.Errorf("result %+v, want %d replayed", res, tc.n)
			}
			if len(f.calls) != tc.pages {
				t.Errorf("%d pages, want %d", len(f.calls), tc.pages)
			}
			for _, c := range f.calls {
				if c.JobID != "job-1" || c.Limit != tc.wantLimit {
					t.Errorf("page %+v, want job-1 limit %d", c, tc.wantLimit)
				}
			}
			for i, k := range f.replays {
				if k != 1 {
					t.Fatalf("delivery %d replayed %d times", i, k)
				}
			}
			if took := env.Now().Sub(start); took < tc.wantMin || took > tc.wantMax {
				t.Errorf("took %v of workflow time, want %v..%v", took, tc.wantMin, tc.wantMax)
			}
		})
	}
}

// Past replayPagesPerRun pages the run continues as new with the cursor and the count,
// and the next run finishes the job from there.
func TestBulkReplayContinuesAsNewWithItsCursor(t *testing.T) {
	f := newFakeJob(replayPagesPerRun + 5)
	env := bulkEnv(f)
	env.ExecuteWorkflow(wire.BulkReplayWorkflowName, wire.BulkReplayInput{JobID: "job-1", Rate: 1, PageSize: 1})
	var next wire.BulkReplayInput
	if can := continuedAs(t, env, &next); len(f.calls) != replayPagesPerRun || can.WorkflowType.Name != wire.BulkReplayWorkflowName {
		t.Errorf("%d pages before continuing as %s, want %d", len(f.calls), can.WorkflowType.Name, replayPagesPerRun)
	}
	want := wire.BulkReplayInput{JobID: "job-1", Rate: 1, PageSize: 1, CursorID: strconv.Itoa(replayPagesPerRun - 1), Replayed: replayPagesPerRun}
	if next != want {
		t.Fatalf("continued with %+v, want %+v", next, want)
	}
	env2 := bulkEnv(f)
	env2.ExecuteWorkflow(wire.BulkReplayWorkflowName, next)
	var res wire.BulkReplayResult
	if err := env2.GetWorkflowResult(&res); err != nil || res.Replayed != f.n {
		t.Fatalf("second run = %+v, %v", res, err)
	}
	for i, k := range f.replays {
		if k != 1 {
			t.Fatalf("delivery %d replayed %d times", i, k)
		}
	}
}

// A job whose row is gone ends the workflow instead of retrying for ever.
func TestBulkReplayEndsWhenTheJobIsGone(t *testing.T) {
	env := jobEnv(BulkReplay, wire.BulkReplayWorkflowName)
	var b *activities.BulkReplay
	env.OnActivity(b.ReplayPage, mock.Anything, mock.Anything).Return(activities.ReplayPageOutput{},
		temporal.NewNonRetryableApplicationError("gone", activities.ErrTypeReplayJobMissing, nil)).Once()
	env.ExecuteWorkflow(wire.BulkReplayWorkflowName, wire.BulkReplayInput{JobID: "gone", Rate: 50})
	var appErr *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Type() != activities.ErrTypeReplayJobMissing {
		t.Fatalf("got %v, want %s", err, activities.ErrTypeReplayJobMissing)
	}
}

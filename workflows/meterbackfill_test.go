package workflows

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// fakeMeter stands for the meter's row: pages of rows to count, the progress kept by the
// row (a page's answer may be lost after its commit: the retry counts the next page, never
// the same one twice, as store.BackfillMeterPage does), and then a last page that finds
// nothing and marks the meter ready.
type fakeMeter struct {
	pages    []int // rows of each page to backfill
	done     int   // pages committed
	ready    bool
	deleteAt int // the call (1-based) that finds the meter deleted; 0: never
	lostAt   map[int]bool
	calls    []activities.MeterBackfillPageInput
}

func (f *fakeMeter) page(_ context.Context, in activities.MeterBackfillPageInput) (activities.MeterBackfillPageOutput, error) {
	f.calls = append(f.calls, in)
	if len(f.calls) == f.deleteAt {
		return activities.MeterBackfillPageOutput{}, temporal.NewNonRetryableApplicationError("gone", activities.ErrTypeMeterMissing, nil)
	}
	var out activities.MeterBackfillPageOutput
	switch {
	case f.ready:
		out.Done = true
	case f.done == len(f.pages):
		f.ready, out.Done = true, true
	default:
		out.Rows = f.pages[f.done]
		f.done++
	}
	if f.lostAt[len(f.calls)] {
		return activities.MeterBackfillPageOutput{}, errors.New("worker killed after the commit")
	}
	return out, nil
}

func newFakeMeter(pages int, rowsEach int) *fakeMeter {
	f := &fakeMeter{lostAt: map[int]bool{}}
	for range pages {
		f.pages = append(f.pages, rowsEach)
	}
	return f
}

func meterEnv(f *fakeMeter) *testsuite.TestWorkflowEnvironment {
	var b *activities.MeterBackfill
	return jobEnv(MeterBackfill, wire.MeterBackfillWorkflowName, b.BackfillMeterPage, f.page)
}

var meterIn = wire.MeterBackfillInput{MeterID: "meter-1", EnvironmentID: "env-1"}

// Page after page until the meter is ready, each page fair by the meter's environment
// (CONTRACT §17); a page whose answer is lost after its commit is run again and counts
// the next rows (the row keeps the progress), so every row is counted once: the lost
// page's rows are in the meter's figures, not in the workflow's count.
func TestMeterBackfillPagesUntilReady(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pages     int
		lost      map[int]bool
		wantCalls int
		wantPages int
	}{
		{name: "three pages", pages: 3, wantCalls: 4, wantPages: 4},
		{name: "answer lost", pages: 3, lost: map[int]bool{2: true}, wantCalls: 4, wantPages: 3},
		{name: "nothing left", pages: 0, wantCalls: 1, wantPages: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMeter(tc.pages, 5000)
			for k, v := range tc.lost {
				f.lostAt[k] = v
			}
			env := meterEnv(f)
			seen := runSeen(env, wire.MeterBackfillWorkflowName, meterIn)
			var res wire.MeterBackfillResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if !f.ready || len(f.calls) != tc.wantCalls {
				t.Errorf("ready %v after %d calls, want ready after %d", f.ready, len(f.calls), tc.wantCalls)
			}
			wantRows := 5000 * tc.pages
			for k := range tc.lost {
				if k <= tc.pages {
					wantRows -= 5000
				}
			}
			if res.Pages != tc.wantPages || res.Rows != wantRows || res.Deleted {
				t.Errorf("result %+v, want %d pages and %d rows", res, tc.wantPages, wantRows)
			}
			for i, c := range f.calls {
				if c.MeterID != "meter-1" {
					t.Errorf("call %d: %+v, want meter-1", i, c)
				}
			}
			seen.wantPriority(t, "env-1", "BackfillMeterPage")
		})
	}
}

// Past meterBackfillPagesPerRun pages the run continues as new with its counts, and the
// next run goes on from the meter's row until it is ready.
func TestMeterBackfillContinuesAsNew(t *testing.T) {
	f := newFakeMeter(meterBackfillPagesPerRun+5, 10)
	env := meterEnv(f)
	env.ExecuteWorkflow(wire.MeterBackfillWorkflowName, meterIn)
	var next wire.MeterBackfillInput
	if can := continuedAs(t, env, &next); len(f.calls) != meterBackfillPagesPerRun || can.WorkflowType.Name != wire.MeterBackfillWorkflowName {
		t.Errorf("%d pages before continuing as %s, want %d", len(f.calls), can.WorkflowType.Name, meterBackfillPagesPerRun)
	}
	want := wire.MeterBackfillInput{MeterID: "meter-1", EnvironmentID: "env-1", Pages: meterBackfillPagesPerRun, Rows: 10 * meterBackfillPagesPerRun}
	if next != want {
		t.Fatalf("continued with %+v, want %+v", next, want)
	}
	env2 := meterEnv(f)
	env2.ExecuteWorkflow(wire.MeterBackfillWorkflowName, next)
	var res wire.MeterBackfillResult
	if err := env2.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !f.ready || res.Pages != meterBackfillPagesPerRun+6 || res.Rows != 10*(meterBackfillPagesPerRun+5) {
		t.Fatalf("second run = %+v (ready %v)", res, f.ready)
	}
}

// A meter deleted while its backfill runs ends the workflow successfully at once: no
// retry (nothing is left to count), and no failed run in the Temporal UI for a tenant's
// ordinary DELETE.
func TestMeterBackfillEndsCleanlyWhenTheMeterIsDeleted(t *testing.T) {
	f := newFakeMeter(5, 100)
	f.deleteAt = 3
	env := meterEnv(f)
	env.ExecuteWorkflow(wire.MeterBackfillWorkflowName, meterIn)
	var res wire.MeterBackfillResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatalf("workflow error %v, want success", err)
	}
	if !res.Deleted || res.Pages != 2 || res.Rows != 200 || len(f.calls) != 3 {
		t.Fatalf("result %+v after %d calls, want deleted after 2 pages and 3 calls", res, len(f.calls))
	}
}

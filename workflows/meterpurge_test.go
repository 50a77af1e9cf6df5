package workflows

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// fakeMeterPurge stands for a deleted meter's figure rows and its purge row: each page takes
// at most pageRows of what is left, as store.PurgeMeterPage does; a page may fail once
// after its delete (its answer lost), and the retry deletes what is left.
type fakeMeterPurge struct {
	left, pageRows int
	lostAt         map[int]bool // calls (1-based) whose answer is lost
	calls          []string     // "page" or "end", in order
	purgeRow       bool
}

func (f *fakeMeterPurge) page(_ context.Context, in activities.MeterPurgeInput) (activities.MeterPurgePageOutput, error) {
	f.calls = append(f.calls, "page")
	if in.MeterID != "meter-1" {
		return activities.MeterPurgePageOutput{}, errors.New("not the deleted meter")
	}
	n := min(f.left, f.pageRows)
	f.left -= n
	if f.lostAt[len(f.calls)] {
		return activities.MeterPurgePageOutput{}, errors.New("worker killed after the delete")
	}
	return activities.MeterPurgePageOutput{Rows: n, Done: n < f.pageRows}, nil
}

func (f *fakeMeterPurge) end(_ context.Context, in activities.MeterPurgeInput) error {
	f.calls = append(f.calls, "end")
	if f.left > 0 {
		return errors.New("purge row removed while figures are left")
	}
	f.purgeRow = false
	return nil
}

func purgeEnv(f *fakeMeterPurge) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(MeterPurge, workflow.RegisterOptions{Name: wire.MeterPurgeWorkflowName})
	var p *activities.MeterPurge
	env.OnActivity(p.PurgeMeterPage, mock.Anything, mock.Anything).Return(f.page)
	env.OnActivity(p.EndMeterPurge, mock.Anything, mock.Anything).Return(f.end)
	return env
}

var purgeIn = wire.MeterPurgeInput{MeterID: "meter-1", EnvironmentID: "env-1"}

// CONTRACT §21: pages until one finds less than its bound (nothing left), each fair by
// the meter's environment on revops-jobs (§17), and only then the purge row's removal,
// once; a page whose answer is lost is run again and deletes what is left.
func TestMeterPurgePagesUntilNothingIsLeft(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rows      int
		lost      map[int]bool
		wantPages int
	}{
		{name: "three pages and a short one", rows: 3*100 + 40, wantPages: 4},
		{name: "a full last page, then an empty one", rows: 3 * 100, wantPages: 4},
		{name: "answer lost", rows: 3*100 + 40, lost: map[int]bool{2: true}, wantPages: 3},
		{name: "nothing to purge", rows: 0, wantPages: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeMeterPurge{left: tc.rows, pageRows: 100, lostAt: tc.lost, purgeRow: true}
			env := purgeEnv(f)
			seen := &scheduled{opts: map[string]workflow.ActivityOptions{}}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{seen}})
			env.ExecuteWorkflow(wire.MeterPurgeWorkflowName, purgeIn)
			var res wire.MeterPurgeResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			calls := len(tc.lost) + tc.wantPages + 1
			if f.left != 0 || f.purgeRow || len(f.calls) != calls || f.calls[len(f.calls)-1] != "end" {
				t.Fatalf("calls %v, %d rows left, purge row %v; want %d calls ending with the purge row's removal",
					f.calls, f.left, f.purgeRow, calls)
			}
			wantRows := tc.rows
			for k := range tc.lost {
				wantRows -= min(100, tc.rows-100*(k-1)) // the lost page's rows are gone, uncounted
			}
			if res.Pages != tc.wantPages || res.Rows != wantRows {
				t.Errorf("result %+v, want %d pages and %d rows", res, tc.wantPages, wantRows)
			}
			for _, a := range []string{"PurgeMeterPage", "EndMeterPurge"} {
				if p := seen.opts[a].Priority; p != wire.JobsPriority("env-1") {
					t.Errorf("%s priority %+v, want %+v", a, p, wire.JobsPriority("env-1"))
				}
			}
		})
	}
}

// Past meterPurgePagesPerRun pages the run continues as new with its counts, without
// removing the purge row; the next run goes on until nothing is left and then removes it.
func TestMeterPurgeContinuesAsNew(t *testing.T) {
	f := &fakeMeterPurge{left: 10 * (meterPurgePagesPerRun + 5), pageRows: 10, purgeRow: true}
	env := purgeEnv(f)
	env.ExecuteWorkflow(wire.MeterPurgeWorkflowName, purgeIn)
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("got %v, want continue-as-new", err)
	}
	if len(f.calls) != meterPurgePagesPerRun || !f.purgeRow || can.WorkflowType.Name != wire.MeterPurgeWorkflowName {
		t.Errorf("%d calls (purge row %v) before continuing as %s, want %d pages", len(f.calls), f.purgeRow,
			can.WorkflowType.Name, meterPurgePagesPerRun)
	}
	var next wire.MeterPurgeInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	want := wire.MeterPurgeInput{MeterID: "meter-1", EnvironmentID: "env-1", Pages: meterPurgePagesPerRun, Rows: 10 * meterPurgePagesPerRun}
	if next != want {
		t.Fatalf("continued with %+v, want %+v", next, want)
	}
	env2 := purgeEnv(f)
	env2.ExecuteWorkflow(wire.MeterPurgeWorkflowName, next)
	var res wire.MeterPurgeResult
	if err := env2.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if f.purgeRow || f.left != 0 || res.Pages != meterPurgePagesPerRun+6 || res.Rows != 10*(meterPurgePagesPerRun+5) {
		t.Fatalf("second run = %+v (purge row %v, %d left)", res, f.purgeRow, f.left)
	}
}

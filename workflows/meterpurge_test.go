package workflows

import (
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

type fakeMeterPurge = fakeCleanup[activities.MeterPurgeInput, activities.MeterPurgePageOutput]

func purgeEnv(f *fakeMeterPurge) *testsuite.TestWorkflowEnvironment {
	var p *activities.MeterPurge
	return jobEnv(MeterPurge, wire.MeterPurgeWorkflowName, p.PurgeMeterPage, f.page, p.EndMeterPurge, f.end)
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
			f := &fakeMeterPurge{want: activities.MeterPurgeInput{MeterID: "meter-1"}, left: tc.rows, pageRows: 100, lostAt: tc.lost, row: true}
			env := purgeEnv(f)
			seen := runSeen(env, wire.MeterPurgeWorkflowName, purgeIn)
			var res wire.MeterPurgeResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			calls := len(tc.lost) + tc.wantPages + 1
			if f.left != 0 || f.row || len(f.calls) != calls || f.calls[len(f.calls)-1] != "end" {
				t.Fatalf("calls %v, %d rows left, purge row %v; want %d calls ending with the purge row's removal",
					f.calls, f.left, f.row, calls)
			}
			wantRows := tc.rows
			for k := range tc.lost {
				wantRows -= min(100, tc.rows-100*(k-1)) // the lost page's rows are gone, uncounted
			}
			if res.Pages != tc.wantPages || res.Rows != wantRows {
				t.Errorf("result %+v, want %d pages and %d rows", res, tc.wantPages, wantRows)
			}
			seen.wantPriority(t, "env-1", "PurgeMeterPage", "EndMeterPurge")
		})
	}
}

// Past meterPurgePagesPerRun pages the run continues as new with its counts, without
// removing the purge row; the next run goes on until nothing is left and then removes it.
func TestMeterPurgeContinuesAsNew(t *testing.T) {
	f := &fakeMeterPurge{want: activities.MeterPurgeInput{MeterID: "meter-1"}, left: 10 * (meterPurgePagesPerRun + 5), pageRows: 10, row: true}
	env := purgeEnv(f)
	env.ExecuteWorkflow(wire.MeterPurgeWorkflowName, purgeIn)
	var next wire.MeterPurgeInput
	can := continuedAs(t, env, &next)
	if len(f.calls) != meterPurgePagesPerRun || !f.row || can.WorkflowType.Name != wire.MeterPurgeWorkflowName {
		t.Errorf("%d calls (purge row %v) before continuing as %s, want %d pages", len(f.calls), f.row,
			can.WorkflowType.Name, meterPurgePagesPerRun)
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
	if f.row || f.left != 0 || res.Pages != meterPurgePagesPerRun+6 || res.Rows != 10*(meterPurgePagesPerRun+5) {
		t.Fatalf("second run = %+v (purge row %v, %d left)", res, f.row, f.left)
	}
}

package workflows

import (
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// fakeDeletion stands for a deleted endpoint's unfinished deliveries and its deletion
// row, as store.SkipDeletedEndpointPage and EndEndpointDeletion see them.
type fakeDeletion = fakeCleanup[activities.EndpointDeletionInput, activities.EndpointDeletionPageOutput]

func deletionEnv(f *fakeDeletion) *testsuite.TestWorkflowEnvironment {
	var d *activities.EndpointDeletion
	return jobEnv(EndpointDeletion, wire.EndpointDeletionWorkflowName, d.SkipDeletedEndpointPage, f.page, d.EndEndpointDeletion, f.end)
}

// CONTRACT §21: pages until one finds less than its bound, each fair by the endpoint's
// environment on revops-jobs (§17), then the deletion row's removal, once; past
// endpointDeletionPagesPerRun pages the run continues as new with its counts.
func TestEndpointDeletionPagesUntilNoneIsLeft(t *testing.T) {
	in := wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"}
	want := activities.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"}
	f := &fakeDeletion{want: want, left: 3*100 + 40, pageRows: 100, row: true}
	env := deletionEnv(f)
	seen := runSeen(env, wire.EndpointDeletionWorkflowName, in)
	var res wire.EndpointDeletionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if f.left != 0 || f.row || len(f.calls) != 5 || f.calls[4] != "end" || res != (wire.EndpointDeletionResult{Pages: 4, Rows: 340}) {
		t.Fatalf("calls %v, %d left, row %v, result %+v; want 4 pages of 340 deliveries, then the row's removal", f.calls, f.left, f.row, res)
	}
	seen.wantPriority(t, "env-1", "SkipDeletedEndpointPage", "EndEndpointDeletion")

	long := &fakeDeletion{want: want, left: 10 * (endpointDeletionPagesPerRun + 5), pageRows: 10, row: true}
	env = deletionEnv(long)
	env.ExecuteWorkflow(wire.EndpointDeletionWorkflowName, in)
	var next wire.EndpointDeletionInput
	if can := continuedAs(t, env, &next); !long.row || can.WorkflowType.Name != wire.EndpointDeletionWorkflowName {
		t.Fatalf("after %d pages: continued as %s (row %v), want to continue as new", len(long.calls), can.WorkflowType.Name, long.row)
	}
	if w := (wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1", Pages: endpointDeletionPagesPerRun, Rows: 10 * endpointDeletionPagesPerRun}); next != w {
		t.Fatalf("continued with %+v, want %+v", next, w)
	}
}

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

// fakeDeletion stands for a deleted endpoint's unfinished deliveries and its deletion
// row: each page ends at most pageRows of what is left, as store.SkipDeletedEndpointPage
// does.
type fakeDeletion struct {
	left, pageRows int
	calls          []string // "page" or "end", in order
	row            bool
}

func (f *fakeDeletion) page(_ context.Context, in activities.EndpointDeletionInput) (activities.EndpointDeletionPageOutput, error) {
	f.calls = append(f.calls, "page")
	if in != (activities.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"}) {
		return activities.EndpointDeletionPageOutput{}, errors.New("not the deleted endpoint")
	}
	n := min(f.left, f.pageRows)
	f.left -= n
	return activities.EndpointDeletionPageOutput{Rows: n, Done: n < f.pageRows}, nil
}

func (f *fakeDeletion) end(context.Context, activities.EndpointDeletionInput) error {
	f.calls = append(f.calls, "end")
	if f.left > 0 {
		return errors.New("deletion row removed while deliveries are unfinished")
	}
	f.row = false
	return nil
}

func deletionEnv(f *fakeDeletion) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(EndpointDeletion, workflow.RegisterOptions{Name: wire.EndpointDeletionWorkflowName})
	var d *activities.EndpointDeletion
	env.OnActivity(d.SkipDeletedEndpointPage, mock.Anything, mock.Anything).Return(f.page)
	env.OnActivity(d.EndEndpointDeletion, mock.Anything, mock.Anything).Return(f.end)
	return env
}

// CONTRACT §21: pages until one finds less than its bound, each fair by the endpoint's
// environment on revops-jobs (§17), then the deletion row's removal, once; past
// endpointDeletionPagesPerRun pages the run continues as new with its counts.
func TestEndpointDeletionPagesUntilNoneIsLeft(t *testing.T) {
	f := &fakeDeletion{left: 3*100 + 40, pageRows: 100, row: true}
	env := deletionEnv(f)
	seen := &scheduled{opts: map[string]workflow.ActivityOptions{}}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{seen}})
	env.ExecuteWorkflow(wire.EndpointDeletionWorkflowName, wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"})
	var res wire.EndpointDeletionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if f.left != 0 || f.row || len(f.calls) != 5 || f.calls[4] != "end" || res != (wire.EndpointDeletionResult{Pages: 4, Rows: 340}) {
		t.Fatalf("calls %v, %d left, row %v, result %+v; want 4 pages of 340 deliveries, then the row's removal", f.calls, f.left, f.row, res)
	}
	for _, a := range []string{"SkipDeletedEndpointPage", "EndEndpointDeletion"} {
		if p := seen.opts[a].Priority; p != wire.JobsPriority("env-1") {
			t.Errorf("%s priority %+v, want %+v", a, p, wire.JobsPriority("env-1"))
		}
	}

	long := &fakeDeletion{left: 10 * (endpointDeletionPagesPerRun + 5), pageRows: 10, row: true}
	env = deletionEnv(long)
	env.ExecuteWorkflow(wire.EndpointDeletionWorkflowName, wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) || !long.row || can.WorkflowType.Name != wire.EndpointDeletionWorkflowName {
		t.Fatalf("after %d pages: %v (row %v), want to continue as new", len(long.calls), err, long.row)
	}
	var next wire.EndpointDeletionInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	want := wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1", Pages: endpointDeletionPagesPerRun, Rows: 10 * endpointDeletionPagesPerRun}
	if next != want {
		t.Fatalf("continued with %+v, want %+v", next, want)
	}
}

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

	"github.com/revops/revops/workflows/wire"
)

// jobEnv is a test environment with workflow wf registered under name and each activity
// of mocks (an activity method, then the fake that answers it, in pairs) mocked.
func jobEnv(wf any, name string, mocks ...any) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: name})
	for i := 0; i+1 < len(mocks); i += 2 {
		env.OnActivity(mocks[i], mock.Anything, mock.Anything).Return(mocks[i+1])
	}
	return env
}

// runSeen runs workflow wf with input in on env and keeps the options each activity
// type was last scheduled with.
func runSeen(env *testsuite.TestWorkflowEnvironment, wf, in any) *scheduled {
	seen := &scheduled{opts: map[string]workflow.ActivityOptions{}}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{seen}})
	env.ExecuteWorkflow(wf, in)
	return seen
}

// wantPriority checks that each activity type of acts was scheduled fair by environment
// envID (CONTRACT §17).
func (s *scheduled) wantPriority(t *testing.T, envID string, acts ...string) {
	t.Helper()
	for _, a := range acts {
		if p := s.opts[a].Priority; p != wire.JobsPriority(envID) {
			t.Errorf("%s priority %+v, want %+v", a, p, wire.JobsPriority(envID))
		}
	}
}

// continuedAs checks that env's run continued as new and decodes the next run's input
// into next.
func continuedAs(t *testing.T, env *testsuite.TestWorkflowEnvironment, next any) *workflow.ContinueAsNewError {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("got %v, want continue-as-new", err)
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, next); err != nil {
		t.Fatal(err)
	}
	return can
}

// pageOutput is what a page of a tenant's cleanup job answers (MeterPurgePageOutput,
// EndpointDeletionPageOutput).
type pageOutput interface {
	~struct {
		Rows int
		Done bool
	}
}

// fakeCleanup stands for the rows a cleanup job removes (a deleted meter's figures, a
// deleted endpoint's unfinished deliveries) and its job row: each page takes at most
// pageRows of what is left, as the store's page does (store.PurgeMeterPage,
// SkipDeletedEndpointPage); a page may fail once after its work (its answer lost), and
// the retry does what is left.
type fakeCleanup[In comparable, Out pageOutput] struct {
	want           In // the input every activity must be given
	left, pageRows int
	lostAt         map[int]bool // calls (1-based) whose answer is lost
	calls          []string     // "page" or "end", in order
	row            bool         // the job's row is still there
}

func (f *fakeCleanup[In, Out]) page(_ context.Context, in In) (Out, error) {
	f.calls = append(f.calls, "page")
	if in != f.want {
		return Out{}, errors.New("not the job's input")
	}
	n := min(f.left, f.pageRows)
	f.left -= n
	if f.lostAt[len(f.calls)] {
		return Out{}, errors.New("worker killed after the page's work")
	}
	return Out{Rows: n, Done: n < f.pageRows}, nil
}

func (f *fakeCleanup[In, Out]) end(_ context.Context, in In) error {
	f.calls = append(f.calls, "end")
	if f.left > 0 || in != f.want {
		return errors.New("job row removed while rows are left")
	}
	f.row = false
	return nil
}

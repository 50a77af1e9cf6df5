package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// jobRows stands for the rows of every kind of tenant job (store.UnstartedJobs,
// MarkJobStarted): the unstarted jobs it was given, and the ids marked started.
type jobRows struct {
	unstarted []store.Job
	started   map[string]bool // by store.Job.Key
	marked    []string
}

// add records jobs as unstarted rows.
func (r *jobRows) add(jobs ...store.Job) { r.unstarted = append(r.unstarted, jobs...) }

func (r *jobRows) UnstartedJobs(_ context.Context, kind store.JobKind, _ time.Time, limit int) ([]store.Job, error) {
	var out []store.Job
	for _, j := range r.unstarted {
		if j.Kind == kind && !r.started[j.Key()] && len(out) < limit {
			out = append(out, j)
		}
	}
	return out, nil
}

func (r *jobRows) MarkJobStarted(_ context.Context, j store.Job, _ time.Time) error {
	if r.started == nil {
		r.started = map[string]bool{}
	}
	r.started[j.Key()] = true
	r.marked = append(r.marked, j.ID)
	return nil
}

// startsClient records the starts of workflow want asked of it and answers each with err.
type startsClient struct {
	client.Client
	want   string
	err    error
	starts []client.StartWorkflowOptions
	inputs []any
}

func (c *startsClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	c.starts, c.inputs = append(c.starts, opts), append(c.inputs, args...)
	if wf != c.want {
		return nil, errors.New("not the " + c.want + " workflow")
	}
	return nil, c.err
}

// CONTRACT §21: a deleted endpoint's job, and a deleted meter's purge, is started on
// revops-jobs, fair by its environment, under the id endpoint-deletion-<endpoint id>
// (meter-purge-<meter id>: one run per endpoint or meter, ever), and marked; the sweeper
// starts what the API's start missed (a crash after the commit), once, and marks nothing
// while Temporal refuses.
func TestJobStartsAndSweeps(t *testing.T) {
	deletion := func(id string) store.Job {
		return store.DeletionOf(models.EndpointDeletion{EndpointID: id, OrganizationID: "org-1", EnvironmentID: "env-1"})
	}
	purge := func(id string) store.Job {
		return store.PurgeOf(models.MeterPurge{MeterID: id, OrganizationID: "org-1", EnvironmentID: "env-1", MeterKey: "calls"})
	}
	for _, tc := range []struct {
		name, workflow string
		a, b           store.Job
		wantID         string
		wantInput      any
	}{
		{"endpoint deletion", wire.EndpointDeletionWorkflowName, deletion("ep-1"), deletion("ep-2"),
			"endpoint-deletion-ep-1", wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"}},
		{"meter purge", wire.MeterPurgeWorkflowName, purge("m-1"), purge("m-2"),
			"meter-purge-m-1", wire.MeterPurgeInput{MeterID: "m-1", EnvironmentID: "env-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkStartsAndSweeps(t, tc.workflow, tc.a, tc.b, tc.wantID, tc.wantInput)
		})
	}
}

// checkStartsAndSweeps: the sweeps of a tenant job of two rows, a and b (of env-1), with
// Temporal away, then twice with it; a's start has the id wantID and input wantInput.
func checkStartsAndSweeps(t *testing.T, workflow string, a, b store.Job, wantID string, wantInput any) {
	t.Helper()
	rows := &jobRows{}
	rows.add(a, b)
	away := &dispatch.Jobs{Client: &startsClient{want: workflow, err: errors.New("connection refused")}, Store: rows}
	if n, err := away.Sweep(context.Background()); err == nil || n != 0 || len(rows.marked) != 0 {
		t.Fatalf("sweep with Temporal away: %d started, %v, marked %v", n, err, rows.marked)
	}
	c := &startsClient{want: workflow}
	d := &dispatch.Jobs{Client: c, Store: rows}
	if n, err := d.Sweep(context.Background()); err != nil || n != 2 {
		t.Fatalf("first sweep started %d (%v), want 2", n, err)
	}
	if n, err := d.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (%v), want 0", n, err)
	}
	o := c.starts[0]
	if len(c.starts) != 2 || len(rows.marked) != 2 || o.ID != wantID || o.TaskQueue != wire.JobsTaskQueue ||
		o.Priority != wire.JobsPriority("env-1") || o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Fatalf("%d starts, %d marks; first %+v", len(c.starts), len(rows.marked), o)
	}
	if in := c.inputs[0]; in != wantInput {
		t.Errorf("input %+v", in)
	}
}

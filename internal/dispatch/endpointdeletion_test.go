package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// deletionStarts records the EndpointDeletion starts asked of it and answers each with err.
type deletionStarts struct {
	client.Client
	err    error
	starts []client.StartWorkflowOptions
	inputs []any
}

func (c *deletionStarts) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if wf != wire.EndpointDeletionWorkflowName {
		return nil, errors.New("not the EndpointDeletion workflow")
	}
	c.starts, c.inputs = append(c.starts, opts), append(c.inputs, args...)
	return nil, c.err
}

// deletionRows stands for the endpoint_deletions table.
type deletionRows struct {
	unstarted []models.EndpointDeletion
	marked    []string
}

func (r *deletionRows) UnstartedEndpointDeletions(_ context.Context, _ time.Time, limit int) ([]models.EndpointDeletion, error) {
	var out []models.EndpointDeletion
	for _, d := range r.unstarted {
		if d.StartedAt == nil && len(out) < limit {
			out = append(out, d)
		}
	}
	return out, nil
}

func (r *deletionRows) MarkEndpointDeletionStarted(_ context.Context, id string, at time.Time) error {
	for i := range r.unstarted {
		if r.unstarted[i].EndpointID == id {
			r.unstarted[i].StartedAt = &at
		}
	}
	r.marked = append(r.marked, id)
	return nil
}

// CONTRACT §21: a deleted endpoint's job is started on revops-jobs, fair by its
// environment, under the id endpoint-deletion-<endpoint id> (one run per endpoint, ever),
// and marked; the sweeper starts what the API's start missed (a crash after the commit),
// once, and marks nothing while Temporal refuses.
func TestEndpointDeletionStartsAndSweeps(t *testing.T) {
	rows := &deletionRows{}
	for _, id := range []string{"ep-1", "ep-2"} {
		rows.unstarted = append(rows.unstarted, models.EndpointDeletion{EndpointID: id, OrganizationID: "org-1", EnvironmentID: "env-1"})
	}
	away := &dispatch.Jobs{Client: &deletionStarts{err: errors.New("connection refused")}, Store: jobRows{deletions: rows}}
	if n, err := away.Sweep(context.Background()); err == nil || n != 0 || len(rows.marked) != 0 {
		t.Fatalf("sweep with Temporal away: %d started, %v, marked %v", n, err, rows.marked)
	}
	c := &deletionStarts{}
	d := &dispatch.Jobs{Client: c, Store: jobRows{deletions: rows}}
	if n, err := d.Sweep(context.Background()); err != nil || n != 2 {
		t.Fatalf("first sweep started %d (%v), want 2", n, err)
	}
	if n, err := d.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (%v), want 0", n, err)
	}
	o := c.starts[0]
	if len(c.starts) != 2 || len(rows.marked) != 2 || o.ID != "endpoint-deletion-ep-1" || o.TaskQueue != wire.JobsTaskQueue ||
		o.Priority != wire.JobsPriority("env-1") || o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Fatalf("%d starts, %d marks; first %+v", len(c.starts), len(rows.marked), o)
	}
	if in := c.inputs[0]; in != (wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"}) {
		t.Errorf("input %+v", in)
	}
}

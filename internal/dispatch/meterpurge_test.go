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

// purgeStarts records the MeterPurge starts asked of it and answers each with err.
type purgeStarts struct {
	client.Client
	err    error
	starts []client.StartWorkflowOptions
	inputs []any
}

func (c *purgeStarts) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if wf != wire.MeterPurgeWorkflowName {
		return nil, errors.New("not the MeterPurge workflow")
	}
	c.starts, c.inputs = append(c.starts, opts), append(c.inputs, args...)
	return nil, c.err
}

// purgeRows stands for the meter_purges table.
type purgeRows struct {
	unstarted []models.MeterPurge
	marked    []string
}

func (r *purgeRows) UnstartedPurges(_ context.Context, _ time.Time, limit int) ([]models.MeterPurge, error) {
	var out []models.MeterPurge
	for _, p := range r.unstarted {
		if p.StartedAt == nil && len(out) < limit {
			out = append(out, p)
		}
	}
	return out, nil
}

func (r *purgeRows) MarkPurgeStarted(_ context.Context, id string, at time.Time) error {
	for i := range r.unstarted {
		if r.unstarted[i].MeterID == id {
			r.unstarted[i].StartedAt = &at
		}
	}
	r.marked = append(r.marked, id)
	return nil
}

// CONTRACT §21: a deleted meter's purge is started on revops-jobs, fair by its
// environment, under the id meter-purge-<meter id> (one run per meter, ever), and marked;
// the sweeper starts what the API's start missed, once, and marks nothing while Temporal
// refuses.
func TestMeterPurgeStartsAndSweeps(t *testing.T) {
	rows := &purgeRows{}
	for _, id := range []string{"m-1", "m-2"} {
		rows.unstarted = append(rows.unstarted, models.MeterPurge{MeterID: id, OrganizationID: "org-1", EnvironmentID: "env-1", MeterKey: "calls"})
	}
	away := &dispatch.Jobs{Client: &purgeStarts{err: errors.New("connection refused")}, Store: jobRows{purges: rows}}
	if n, err := away.Sweep(context.Background()); err == nil || n != 0 || len(rows.marked) != 0 {
		t.Fatalf("sweep with Temporal away: %d started, %v, marked %v", n, err, rows.marked)
	}
	c := &purgeStarts{}
	p := &dispatch.Jobs{Client: c, Store: jobRows{purges: rows}}
	if n, err := p.Sweep(context.Background()); err != nil || n != 2 {
		t.Fatalf("first sweep started %d (%v), want 2", n, err)
	}
	if n, err := p.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (%v), want 0", n, err)
	}
	o := c.starts[0]
	if len(c.starts) != 2 || len(rows.marked) != 2 || o.ID != "meter-purge-m-1" || o.TaskQueue != wire.JobsTaskQueue ||
		o.Priority != wire.JobsPriority("env-1") || o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Fatalf("%d starts, %d marks; first %+v", len(c.starts), len(rows.marked), o)
	}
	if in := c.inputs[0]; in != (wire.MeterPurgeInput{MeterID: "m-1", EnvironmentID: "env-1"}) {
		t.Errorf("input %+v", in)
	}
}

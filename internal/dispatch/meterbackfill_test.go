package dispatch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// startsClient records the workflow starts asked of it and answers each with err.
type startsClient struct {
	client.Client
	err    error
	starts []client.StartWorkflowOptions
	inputs []any
}

func (c *startsClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	c.starts = append(c.starts, opts)
	c.inputs = append(c.inputs, args...)
	if wf != wire.MeterBackfillWorkflowName {
		return nil, errors.New("not the MeterBackfill workflow")
	}
	return nil, c.err
}

// backfillRows stands for the meters table: the unstarted backfills and the marks.
type backfillRows struct {
	unstarted []models.Meter
	marked    []string
}

func (r *backfillRows) UnstartedBackfills(_ context.Context, _ time.Time, limit int) ([]models.Meter, error) {
	var out []models.Meter
	for _, m := range r.unstarted {
		if m.BackfillStartedAt == nil && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, nil
}

func (r *backfillRows) MarkBackfillStarted(_ context.Context, id string, at time.Time) error {
	for i := range r.unstarted {
		if r.unstarted[i].ID == id && r.unstarted[i].BackfillStartedAt == nil {
			r.unstarted[i].BackfillStartedAt = &at
		}
	}
	r.marked = append(r.marked, id)
	return nil
}

var backfilling = models.Meter{ID: "m-1", OrganizationID: "org-1", EnvironmentID: "env-1", Key: "api_calls", Status: models.MeterBackfilling}

// A meter's backfill is started once per meter on revops-jobs, fair by its environment,
// with the search attributes a bulk replay has, and marked started; a start Temporal
// refuses because the workflow exists already (a sweeper and the API raced, or the run
// finished) counts as started; a start that fails is not marked, so the sweeper retries.
func TestStartMeterBackfill(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		wantMarked bool
	}{
		{"started", nil, true},
		{"already started", serviceerror.NewWorkflowExecutionAlreadyStarted("exists", "", ""), true},
		{"Temporal away", errors.New("connection refused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, rows := &startsClient{err: tc.err}, &backfillRows{}
			b := &dispatch.Jobs{Client: c, Store: jobRows{backfills: rows}}
			err := b.Start(context.Background(), store.BackfillOf(backfilling))
			if (err == nil) != tc.wantMarked || (len(rows.marked) == 1) != tc.wantMarked {
				t.Fatalf("err %v, marked %v; want marked %v", err, rows.marked, tc.wantMarked)
			}
			o := c.starts[0]
			if o.ID != "meter-backfill-m-1" || o.TaskQueue != wire.JobsTaskQueue ||
				o.Priority != wire.JobsPriority("env-1") ||
				o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE ||
				o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL {
				t.Errorf("start options %+v", o)
			}
			attrs := o.TypedSearchAttributes
			if env, _ := attrs.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.AttrEnvironment)); env != "env-1" {
				t.Errorf("%s = %q", wire.AttrEnvironment, env)
			}
			if org, _ := attrs.GetKeyword(temporal.NewSearchAttributeKeyKeyword(wire.AttrOrganizationID)); org != "org-1" {
				t.Errorf("%s = %q", wire.AttrOrganizationID, org)
			}
			if in := c.inputs[0]; in != (wire.MeterBackfillInput{MeterID: "m-1", EnvironmentID: "env-1"}) {
				t.Errorf("input %+v", in)
			}
		})
	}
}

// The sweeper starts every backfill the API's start missed, once: a second sweep finds
// nothing; while Temporal refuses, it stops after three meters in a row and marks none.
func TestMeterBackfillSweepStartsEachOnce(t *testing.T) {
	rows := &backfillRows{}
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		m := backfilling
		m.ID = id
		rows.unstarted = append(rows.unstarted, m)
	}
	away := &dispatch.Jobs{Client: &startsClient{err: errors.New("connection refused")}, Store: jobRows{backfills: rows}}
	if n, err := away.Sweep(context.Background()); err == nil || n != 0 || len(rows.marked) != 0 {
		t.Fatalf("sweep with Temporal away: %d started, %v, marked %v", n, err, rows.marked)
	}
	c := &startsClient{}
	b := &dispatch.Jobs{Client: c, Store: jobRows{backfills: rows}}
	if n, err := b.Sweep(context.Background()); err != nil || n != 3 {
		t.Fatalf("first sweep started %d (%v), want 3", n, err)
	}
	if n, err := b.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (%v), want 0", n, err)
	}
	if len(c.starts) != 3 || len(rows.marked) != 3 {
		t.Fatalf("%d starts and %d marks, want 3 of each", len(c.starts), len(rows.marked))
	}
}

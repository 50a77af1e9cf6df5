package dispatch_test

import (
	"context"
	"errors"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

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
			c, rows := &startsClient{want: wire.MeterBackfillWorkflowName, err: tc.err}, &jobRows{}
			b := &dispatch.Jobs{Client: c, Store: rows}
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
	rows := &jobRows{}
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		m := backfilling
		m.ID = id
		rows.add(store.BackfillOf(m))
	}
	away := &dispatch.Jobs{Client: &startsClient{want: wire.MeterBackfillWorkflowName, err: errors.New("connection refused")}, Store: rows}
	if n, err := away.Sweep(context.Background()); err == nil || n != 0 || len(rows.marked) != 0 {
		t.Fatalf("sweep with Temporal away: %d started, %v, marked %v", n, err, rows.marked)
	}
	c := &startsClient{want: wire.MeterBackfillWorkflowName}
	b := &dispatch.Jobs{Client: c, Store: rows}
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

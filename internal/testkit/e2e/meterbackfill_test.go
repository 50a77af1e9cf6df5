package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// A meter whose backfill the API could not start (Temporal away when it was created, or
// the process died after commit) is started by the worker's backfill sweeper, once: a
// second sweep finds nothing, and asking again for a finished backfill's workflow starts
// no second run (REJECT_DUPLICATE). The run makes the meter ready.
func TestMeterBackfillSweeperStartsABackfillOnce(t *testing.T) {
	s := newStack(t)
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	ctx := context.Background()
	s.usageTaken(3)
	// No dispatcher after commit is wired into this store: the backfill is left to the sweeper.
	m, err := meterstest.Create(ctx, s.db.Store, s.db.Env, meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggCount},
		time.Now())
	if err != nil || m.Status != models.MeterBackfilling || m.BackfillStartedAt != nil {
		t.Fatalf("meter = %+v, %v", m, err)
	}
	backfills := &dispatch.Jobs{Client: c, Store: s.db.Store, SweepAge: time.Nanosecond}
	if n, err := backfills.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("first sweep started %d (%v), want 1", n, err)
	}
	if n, err := backfills.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (%v), want 0", n, err)
	}
	wid := wire.MeterBackfillWorkflowID(m.ID)
	var res wire.MeterBackfillResult
	if err := c.GetWorkflow(ctx, wid, "").Get(ctx, &res); err != nil || res.Deleted || res.Pages != 2 {
		t.Fatalf("run of %s: %+v, %v; want one page and the last", wid, res, err)
	}
	first, err := c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := backfills.Start(ctx, store.BackfillOf(m)); err != nil {
		t.Fatalf("asking again for a finished backfill's workflow: %v", err)
	}
	latest, err := c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil || latest.GetWorkflowExecutionInfo().GetExecution().GetRunId() != first.GetWorkflowExecutionInfo().GetExecution().GetRunId() {
		t.Fatalf("a second run of %s was started (%v)", wid, err)
	}
	waitListed(t, c, "WorkflowId = '"+wid+"' AND "+wire.AttrEnvironment+" = '"+s.db.Env.ID+"'", 1)
	row, err := s.db.Store.MeterByID(ctx, m.ID)
	if err != nil || row.Status != models.MeterReady || row.BackfillStartedAt == nil {
		t.Fatalf("meter row = %+v, %v", row, err)
	}
}

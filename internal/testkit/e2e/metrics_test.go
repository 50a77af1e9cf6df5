package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
)

// TestTemporalHandlerWithRealServer gives TemporalHandler to a client and worker of a
// real Temporal server, runs a workflow with an activity, and finds the SDK's worker and
// client metrics in the scrape, labelled with the SDK's tags.
func TestTemporalHandlerWithRealServer(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.NewClientWithOptions(client.Options{MetricsHandler: metrics.TemporalHandler()})
	const queue = "metrics-probe"
	w := worker.New(c, queue, worker.Options{})
	w.RegisterActivityWithOptions(func(ctx context.Context) error { return nil }, activity.RegisterOptions{Name: "Ping"})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 5 * time.Second})
		return workflow.ExecuteActivity(ctx, "Ping").Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "MetricsProbe"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "metrics-probe", TaskQueue: queue}, "MetricsProbe")
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}

	wants := []struct{ prefix, labels string }{
		{"revops_temporal_request_total{", `operation="StartWorkflowExecution"`},
		{"revops_temporal_request_latency_seconds_count{", `operation="StartWorkflowExecution"`},
		{"revops_temporal_workflow_completed_total{", `workflow_type="MetricsProbe"`},
		{"revops_temporal_activity_execution_latency_seconds_count{", `activity_type="Ping"`},
		{"revops_temporal_worker_start_total{", `task_queue="` + queue + `"`},
	}
	// The worker counts the completed workflow after the server has it: run.Get may
	// return first, so the scrape is read again until every series is there (or 10 s).
	var missing []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		page := metricstest.Scrape(t)
		missing = missing[:0]
		for _, want := range wants {
			found := page.Series(want.prefix)
			if !strings.Contains(strings.Join(found, "\n"), want.labels) {
				missing = append(missing, fmt.Sprintf("no %s…} series with %s; have %q", want.prefix, want.labels, found))
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, m := range missing {
		t.Error(m)
	}
}

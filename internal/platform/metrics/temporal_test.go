package metrics_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
)

// TestTemporalHandlerSeries: each SDK metric kind becomes its Prometheus form, tags
// become labels, and uses of one name with other tag sets keep one label set (missing
// labels empty, extra tags dropped) so that the scrape never fails.
func TestTemporalHandlerSeries(t *testing.T) {
	h := metrics.TemporalHandler().WithTags(map[string]string{"namespace": "default"})
	h.WithTags(map[string]string{"task-queue": "q1"}).Counter("probe.requests").Inc(3)
	h.WithTags(map[string]string{"task-queue": "q1"}).Counter("probe.requests").Inc(-5) // ignored, not a panic
	h.WithTags(map[string]string{"task-queue": "q2", "extra": "x"}).Counter("probe.requests").Inc(1)
	h.WithTags(map[string]string{"namespace": "other"}).Counter("probe.requests").Inc(1)
	h.WithTags(map[string]string{"poller_type": "workflow_task"}).Gauge("probe_pollers").Update(2)
	h.WithTags(map[string]string{"poller_type": "workflow_task"}).Gauge("probe_pollers").Update(4)
	h.Timer("probe_latency").Record(1500 * time.Millisecond)
	h.Timer("probe_latency").Record(500 * time.Millisecond)
	// Same Prometheus name as the counter above but a gauge: dropped, not a scrape error.
	h.Gauge("probe_requests_total").Update(99)

	page := metricstest.Scrape(t)
	for series, want := range map[string]float64{
		`revops_probe_requests_total{namespace="default",task_queue="q1"}`:      3,
		`revops_probe_requests_total{namespace="default",task_queue="q2"}`:      1,
		`revops_probe_requests_total{namespace="other",task_queue=""}`:          1,
		`revops_probe_pollers{namespace="default",poller_type="workflow_task"}`: 4,
		`revops_probe_latency_seconds_count{namespace="default"}`:               2,
		`revops_probe_latency_seconds_sum{namespace="default"}`:                 2,
	} {
		if got := value(t, page, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if got := page.Series("revops_probe_requests_total"); len(got) != 3 {
		t.Errorf("want the 3 counter series only, got %q", got)
	}
}

// TestTemporalHandlerInWorkflow: a metric a workflow emits through
// workflow.GetMetricsHandler reaches the scrape when the SDK is given TemporalHandler.
func TestTemporalHandlerInWorkflow(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	s.SetMetricsHandler(metrics.TemporalHandler())
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context) error { return nil }, activity.RegisterOptions{Name: "Ping"})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"kind": "probe"}).Counter("probe_runs").Inc(2)
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Second})
		return workflow.ExecuteActivity(ctx, "Ping").Get(ctx, nil)
	}, workflow.RegisterOptions{Name: "MetricsProbe"})
	env.ExecuteWorkflow("MetricsProbe")
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if got := value(t, metricstest.Scrape(t), `revops_probe_runs_total{kind="probe"}`); got != 2 {
		t.Fatalf("probe_runs = %v, want 2", got)
	}
}

package e2e

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/workflows"
	"github.com/revops/revops/workflows/wire"
)

// temporal-setup on a real server registers a namespace it does not have, with the
// retention, the typed search attributes and the daily retention Schedule; a second run
// changes nothing; a new REVOPS_RETENTION updates the namespace and the Schedule; the
// Schedule's action runs the Retention workflow on a worker, which purges the events
// older than the retention, with their attempts, from PostgreSQL.
func TestTemporalSetupIsIdempotent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	stack, err := devstack.Start(ctx, devstack.Options{
		DataDir: t.TempDir(), FrontendAddr: "127.0.0.1:0", Namespace: "default", Logger: quiet,
	})
	if err != nil {
		t.Fatalf("devstack: %v", err)
	}
	t.Cleanup(func() { _ = stack.Stop() })
	const ns = "revops-setup-test"
	tc, err := client.DialContext(ctx, client.Options{HostPort: stack.FrontendAddr(), Namespace: ns, Logger: sdklog.NewStructuredLogger(quiet)})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	setup := func(retention time.Duration) []string {
		t.Helper()
		cfg := config.Config{TemporalNamespace: ns, Retention: retention}
		res, err := temporalsetup.Run(ctx, tc, app.TemporalSetup(cfg, quiet, devstack.SearchAttributeSettle))
		if err != nil {
			t.Fatalf("setup with retention %s: %v", retention, err)
		}
		return res.Changes
	}

	first := setup(720 * time.Hour)
	if len(first) != 5 {
		t.Errorf("first run changed %q, want the namespace, the search attributes, the two schedules and the paced queue's per-key rate", first)
	}
	// CONTRACT §27: each paced endpoint's key is limited to 1/s times its weight override
	// (the queue's config reaches DescribeTaskQueue shortly after the update).
	paced := temporalsetup.PacedQueue{Client: tc, Namespace: ns, Queue: wire.PacedTaskQueue}
	waitFor(t, 30*time.Second, "the paced queue's per-key rate", func() bool {
		rate, _, err := paced.Config(ctx)
		return err == nil && rate != nil && *rate == wire.PacedKeyRate
	})
	check(ctx, t, tc, ns, 720*time.Hour)
	updatedAt := scheduleUpdatedAt(ctx, t, tc)
	if again := setup(720 * time.Hour); len(again) != 0 {
		t.Errorf("second run changed %q, want nothing", again)
	}
	if got := scheduleUpdatedAt(ctx, t, tc); !got.Equal(updatedAt) {
		t.Errorf("second run updated the schedule (%v → %v)", updatedAt, got)
	}

	changed := setup(1000 * time.Hour)
	if len(changed) != 2 {
		t.Errorf("new retention changed %q, want the namespace retention and the schedule", changed)
	}
	check(ctx, t, tc, ns, 1000*time.Hour)
	if again := setup(1000 * time.Hour); len(again) != 0 {
		t.Errorf("run after the update changed %q, want nothing", again)
	}
	// The Schedule of a release before the three task queues, whose action ran on
	// revops-webhooks, moves to revops-system (CONTRACT §17).
	before := app.TemporalSetup(config.Config{TemporalNamespace: ns, Retention: 1000 * time.Hour}, quiet, devstack.SearchAttributeSettle)
	before.Schedules[0].TaskQueue = wire.TaskQueue
	if _, err := temporalsetup.Run(ctx, tc, before); err != nil {
		t.Fatal(err)
	}
	if moved := setup(1000 * time.Hour); len(moved) != 1 {
		t.Errorf("setup after an earlier release's schedule changed %q, want the schedule", moved)
	}

	// The Schedule's action starts a Retention run that a worker completes: events older
	// than the retention go with their attempts, a newer one stays.
	url := testdb.URL(t)
	st := testdb.Open(t, url)
	db, err := gorm.Open(postgres.Open(url), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	env := testdb.Seed(t, st, "live")
	now := time.Now().UTC()
	for id, at := range map[string]time.Time{"evt_old1": now.Add(-1001 * time.Hour), "evt_old2": now.Add(-2000 * time.Hour), "evt_new": now.Add(-999 * time.Hour)} {
		if err := db.Exec(`INSERT INTO events (id, organization_id, environment_id, environment, type, object_type, object_id,
			time, payload, status, seq, created_at, updated_at)
			VALUES (?, ?, ?, 'live', 'deal-created', 'deal', 'deal_1', '', '{}', 'delivered', 1, ?, ?)`, id, env.OrganizationID, env.ID, at, at).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(`INSERT INTO delivery_attempts (id, event_id, environment_id, number, trigger, started_at, outcome, created_at)
			VALUES (?, ?, ?, 1, 'initial', ?, 'delivered', ?)`, "att_"+id, id, env.ID, at, at).Error; err != nil {
			t.Fatal(err)
		}
	}
	w := worker.New(tc, wire.SystemTaskQueue, worker.Options{})
	workflows.RegisterRetention(w, &activities.Retention{Store: st})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h := tc.ScheduleClient().GetHandle(ctx, wire.RetentionScheduleID)
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatalf("trigger: %v", err)
	}
	var runID, workflowID string
	for runID == "" {
		desc, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(desc.Info.RecentActions); n > 0 {
			a := desc.Info.RecentActions[n-1].StartWorkflowResult
			workflowID, runID = a.WorkflowID, a.FirstExecutionRunID
		}
		if ctx.Err() != nil {
			t.Fatal("the schedule never started a run")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var res wire.RetentionResult
	if err := tc.GetWorkflow(ctx, workflowID, runID).Get(ctx, &res); err != nil {
		t.Fatalf("scheduled retention run: %v", err)
	}
	if res.Deleted["events"] != 2 || res.Deleted["delivery_attempts"] != 2 {
		t.Errorf("the scheduled run deleted %v, want 2 events and their 2 attempts (retention 1000h)", res.Deleted)
	}
	var left []string
	if err := db.Raw("SELECT id FROM events ORDER BY id").Scan(&left).Error; err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != "evt_new" {
		t.Errorf("events left %v, want [evt_new]", left)
	}
}

func check(ctx context.Context, t *testing.T, tc client.Client, ns string, retention time.Duration) {
	t.Helper()
	desc, err := tc.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if got := desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration(); got != retention {
		t.Errorf("namespace retention %s, want %s", got, retention)
	}
	attrs, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range wire.SearchAttributeTypes {
		if got := attrs.GetCustomAttributes()[name]; got != typ {
			t.Errorf("search attribute %s is %v, want %v", name, got, typ)
		}
	}
	sd, err := tc.ScheduleClient().GetHandle(ctx, wire.RetentionScheduleID).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if iv := sd.Schedule.Spec.Intervals; len(iv) != 1 || iv[0].Every != 24*time.Hour {
		t.Errorf("schedule intervals %+v, want every 24h", iv)
	}
	if sd.Schedule.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
		t.Errorf("overlap policy %v", sd.Schedule.Policy.Overlap)
	}
	a, ok := sd.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !ok || a.Workflow != wire.RetentionWorkflowName || a.TaskQueue != wire.SystemTaskQueue || len(a.Args) != 1 {
		t.Fatalf("schedule action %+v", sd.Schedule.Action)
	}
	var in wire.RetentionInput
	if err := converter.GetDefaultDataConverter().FromPayload(a.Args[0].(*commonpb.Payload), &in); err != nil {
		t.Fatal(err)
	}
	if in.Retention != retention {
		t.Errorf("schedule argument retention %s, want %s", in.Retention, retention)
	}
}

func scheduleUpdatedAt(ctx context.Context, t *testing.T, tc client.Client) time.Time {
	t.Helper()
	sd, err := tc.ScheduleClient().GetHandle(ctx, wire.RetentionScheduleID).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sd.Info.LastUpdateAt
}

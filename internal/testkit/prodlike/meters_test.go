package prodlike_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/prodlike"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
)

// prodMatchingRows is how many rows of the metered metric exist when the meter is created.
const prodMatchingRows = 100000

// CONTRACT §18 "Covering every event exactly once" on the production shape: 2 `revops
// api` and 2 `revops worker` processes on PostgreSQL and a Temporal cluster. A client
// sends batches of 1,000 usage rows all along (as fast as they are accepted, then one a
// second once the meter exists); once 100,000 rows of the metric exist a meter is
// created through POST /v1/meters (the API process starts its backfill after commit). While
// the meter is backfilling and its progress (meters.backfill_seq, read from the stack's
// database) has moved but not reached the end, the worker process running its
// BackfillMeterPage is SIGKILLed mid-page, and started again. The page's transaction dies
// with its connection; after the activity's 30 s start-to-close timeout another worker
// runs it again. Once the meter is ready and ingest stops, every value at every window
// size (GET /v1/meters/{key}/values) equals meters.Reference over the stored rows: the
// killed page counted nothing, its
// retry counted each row once, and the rows accepted meanwhile are counted by the consumer.
func TestMeterBackfillSurvivesItsWorkerSIGKILLed(t *testing.T) {
	prodlike.Require(t)
	s, c, _, workers := startShape(t, webhooktest.NewReceiver(t))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	st, err := store.Open(ctx, s.DatabaseURL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env := sandboxOf(ctx, t, s, st, "Acme")
	tc, err := client.Dial(client.Options{HostPort: s.Temporal.Address, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()

	now := time.Now().UTC()
	step := time.Now()
	feeder := c.clone(0)
	feed := meterstest.StartFeed(ctx, func(ctx context.Context, body []byte) error {
		_, err := feeder.change(ctx, "POST", "/v1/usage/events", json.RawMessage(body))
		return err
	}, 1000, 0, 2, now)
	for feed.Matching() < prodMatchingRows {
		if err := feed.Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d rows of %s in %d batches in %s; creating the meter while ingest goes on",
		feed.Matching(), meterstest.Metric, feed.Batches(), since(step))
	// From now on a batch a second: enough to have rows accepted while the meter is
	// created and backfilled, few enough to keep the test's length in bounds.
	feed.SetPause(time.Second)
	obj, err := c.change(ctx, "POST", "/v1/meters", map[string]any{"key": "calls-by-region",
		"filter": map[string]any{"metric_name": meterstest.Metric}, "aggregation": "sum", "group_by": []string{"region"}})
	if err != nil || obj["status"] != models.MeterBackfilling {
		t.Fatalf("meter %v, %v; want backfilling", obj, err)
	}
	m, err := st.MeterByID(ctx, obj["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	wid := workflows.MeterBackfillWorkflowID(m.ID)
	step = time.Now()

	victim := killBackfillMidPage(ctx, t, st, tc, m.ID, workers)
	t.Logf("%s after the meter's creation: SIGKILLed %s", since(step), victim.Name)
	workers = append(workers, s.StartWorker("worker-3"))

	deadline := time.Now().Add(5 * time.Minute)
	for {
		row, err := st.MeterByID(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if row.Status == models.MeterReady {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("meter still %s 5 min after the kill (backfill at seq %d)", row.Status, row.BackfillSeq)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("meter ready %s after its creation; %d rows of %s sent by then", since(step), feed.Matching(), meterstest.Metric)
	last, err := feed.Stop()
	if err != nil {
		t.Fatal(err)
	}

	// One MeterBackfill run, completed, whose killed page was attempted again.
	var res workflows.MeterBackfillResult
	waitCtx, cancelWait := context.WithTimeout(ctx, time.Minute)
	err = tc.GetWorkflow(waitCtx, wid, "").Get(waitCtx, &res)
	cancelWait()
	if err != nil {
		t.Fatalf("run of %s: %v", wid, err)
	}
	retried := 0
	it := tc.GetWorkflowHistory(ctx, wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
			retried++
			t.Logf("a page took %d attempts; the one before the last: %s", a.GetAttempt(), a.GetLastFailure().GetMessage())
		}
	}
	if retried == 0 {
		t.Errorf("no page attempted again: the kill did not cut a running page")
	}
	if retried > 1 { // another page than the killed one timed out: say what its worker saw
		for _, w := range workers {
			b, _ := os.ReadFile(w.Log)
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, "BackfillMeterPage") || strings.Contains(line, "meter") {
					t.Logf("%s: %s", w.Name, line)
				}
			}
		}
	}
	if runs := listRuns(ctx, t, tc, "WorkflowId = '"+wid+"'"); len(runs) != 1 {
		t.Errorf("%d runs of %s, want 1", len(runs), wid)
	}

	values := meterstest.HTTPValues(c.get)
	meterstest.WaitAsOf(t, values, m.Key, last, 3*time.Minute)
	rows, err := st.MeterRows(ctx, env.ID, meterstest.Metric)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) != feed.Matching() {
		t.Fatalf("%d stored rows of %s, the feed had %d accepted", len(rows), meterstest.Metric, feed.Matching())
	}
	n := meterstest.Check(t, values, m, rows, now, last)
	t.Logf("%d rows of %s in %d batches; backfill %d pages (%d page attempts after the first) over %d rows; "+
		"%d values at every window size equal the reference", len(rows), meterstest.Metric, feed.Batches(), res.Pages, retried, res.Rows, n)
}

// sandboxOf finds the sandbox environment of the organization name in the stack's database.
func sandboxOf(ctx context.Context, t *testing.T, s *prodlike.Stack, st *store.Store, name string) models.Env {
	t.Helper()
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var orgID string
	if err := conn.QueryRow(ctx, `SELECT id FROM organizations WHERE name = $1`, name).Scan(&orgID); err != nil {
		t.Fatal(err)
	}
	env, err := st.Environment(ctx, orgID, models.EnvSandbox)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// killBackfillMidPage waits until the meter's backfill has moved but not ended (its row in
// the stack's database) and one of workers is running its BackfillMeterPage (the pending
// activity's worker identity, "<pid>@<host>@", names it), and SIGKILLs that worker.
func killBackfillMidPage(ctx context.Context, t *testing.T, st *store.Store, tc client.Client, meterID string, workers []*prodlike.Proc) *prodlike.Proc {
	t.Helper()
	wid := workflows.MeterBackfillWorkflowID(meterID)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatal("no BackfillMeterPage seen running mid-backfill in 3 min")
		}
		m, err := st.MeterByID(ctx, meterID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == models.MeterReady {
			t.Fatal("the backfill ended before a page was caught running")
		}
		if m.BackfillSeq > 0 {
			if d, err := tc.DescribeWorkflowExecution(ctx, wid, ""); err == nil {
				for _, a := range d.GetPendingActivities() {
					if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
						continue
					}
					pid, _ := strconv.Atoi(strings.SplitN(a.GetLastWorkerIdentity(), "@", 2)[0])
					for _, w := range workers {
						if w.Pid() == pid {
							w.Kill()
							t.Logf("backfill at seq %d: SIGKILLed %s (pid %d) running %s attempt %d",
								m.BackfillSeq, w.Name, pid, a.GetActivityType().GetName(), a.GetAttempt())
							return w
						}
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

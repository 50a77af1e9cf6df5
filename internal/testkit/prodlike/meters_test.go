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

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/clocktest"
	"github.com/revops/revops/internal/testkit/prodlike"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
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
	o := store.DefaultOptions()
	o.Keyring = testdb.Keyring() // the processes' key (prodlike.Start)
	st, err := store.OpenWith(ctx, s.DatabaseURL, o, slog.New(slog.NewTextHandler(io.Discard, nil)))
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

	// The alerts' current day must hold rows when they are put (putKillAlerts), and the
	// feed's rows are at or before its start: keep its start and the alerts' creation
	// (seconds later; 3 minutes allowed) on one UTC day, with a minute of it behind them.
	clocktest.AwayFromBoundary(t, 24*time.Hour, 3*time.Minute, time.Minute)
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
	before, err := st.MeterRows(ctx, env.ID, meterstest.Metric) // what the backfill will count
	if err != nil {
		t.Fatal(err)
	}
	obj, err := c.change(ctx, "POST", "/v1/meters", map[string]any{"key": "calls-by-region",
		"filter": map[string]any{"metric_name": meterstest.Metric}, "aggregation": "sum", "group_by": []string{"region"}})
	if err != nil || obj["status"] != models.MeterBackfilling {
		t.Fatalf("meter %v, %v; want backfilling", obj, err)
	}
	m, err := st.MeterByID(ctx, obj["id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	wid := wire.MeterBackfillWorkflowID(m.ID)
	alerts := putKillAlerts(ctx, t, st, env, m, before)
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
	var res wire.MeterBackfillResult
	waitCtx, cancelWait := context.WithTimeout(ctx, time.Minute)
	err = tc.GetWorkflow(waitCtx, wid, "").Get(waitCtx, &res)
	cancelWait()
	if err != nil {
		t.Fatalf("run of %s: %v", wid, err)
	}
	again := retriedPages(ctx, t, tc, wid)
	for _, a := range again {
		t.Logf("a page took %d attempts; the one before the last: %s", a.GetAttempt(), a.GetLastFailure().GetMessage())
	}
	retried := len(again)
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
	checkFiredOnce(ctx, t, st, env, m, alerts, rows)
	t.Logf("%d rows of %s in %d batches; backfill %d pages (%d page attempts after the first) over %d rows; "+
		"%d values at every window size equal the reference", len(rows), meterstest.Metric, feed.Batches(), res.Pages, retried, res.Rows, n)
}

// putKillAlerts gives the meter usage alerts (CONTRACT §24) as it starts backfilling:
// thresholds some series reach (during the backfill, from its pages or the consumer's
// turns, on either side of the kill) and one none does. An alert watches only windows
// ending after its creation, the current day or month, which hold more or less at
// different times of day: so a threshold is half the largest value a watched series
// has now in the current window over before (the rows the backfill counts), which the
// series reaches since values only grow. Fixed thresholds fired nothing 4 minutes
// after midnight UTC.
func putKillAlerts(ctx context.Context, t *testing.T, st *store.Store, env models.Env, m models.Meter, before []store.UsageRow) []models.MeterAlert {
	t.Helper()
	now := time.Now().UTC()
	// The watched values are the reference's firings of a probe alert created now whose
	// threshold every value with a count reaches.
	halfOfLargest := func(window, account, group string) string {
		probe := models.MeterAlert{MeterID: m.ID, Threshold: "0.01", Window: window, AccountID: account, Group: group, CreatedAt: now}
		watched, _, err := meters.ReferenceFirings(m, []models.MeterAlert{probe}, before, now.AddDate(0, -2, 0), now.AddDate(0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		largest := 0.0
		for _, f := range watched {
			if v, _ := strconv.ParseFloat(f.Value.Value, 64); v > largest {
				largest = v
			}
		}
		if largest < 0.02 {
			t.Fatalf("no %s series of account %q group %s has a value in the current %s: no alert could fire", window, account, group, window)
		}
		return decimal.CanonicalNumber(strconv.FormatFloat(largest/2, 'f', 2, 64)) // as the API keeps it
	}
	var out []models.MeterAlert
	for _, a := range []struct{ window, threshold, account, group string }{
		{"day", halfOfLargest("day", "", "{}"), "", "{}"},
		{"day", halfOfLargest("day", "", `{"region":"eu"}`), "", `{"region":"eu"}`},
		{"month", halfOfLargest("month", "acct_1", "{}"), "acct_1", "{}"},
		{"month", "1000000000000", "", "{}"},
	} {
		al := models.MeterAlert{ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, MeterID: m.ID,
			Threshold: a.threshold, Window: a.window, AccountID: a.account, Group: a.group, CreatedAt: time.Now().UTC()}
		if err := st.PutMeterAlert(ctx, al); err != nil {
			t.Fatal(err)
		}
		out = append(out, al)
	}
	return out
}

// checkFiredOnce holds the alerts' firings to the stored rows: every (alert, series,
// window) whose value reaches the threshold (the rows' values are positive: a value
// that reaches it at the end did at some transaction) fired exactly once, none other did,
// and the events list each firing once, in the event the firing names — whatever the
// SIGKILLed worker's transactions had done when they died.
func checkFiredOnce(ctx context.Context, t *testing.T, st *store.Store, env models.Env, m models.Meter, alerts []models.MeterAlert, rows []store.UsageRow) {
	t.Helper()
	type key struct{ alert, account, groups, start string }
	want := map[key]bool{}
	fire, _, err := meters.ReferenceFirings(m, alerts, rows, oldestCreated(alerts).AddDate(0, -2, 0), time.Now().AddDate(0, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fire {
		groups, _ := json.Marshal(f.GroupValues)
		want[key{f.Alert.ID, f.Value.AccountID, string(groups), f.Value.WindowStart.UTC().Format(time.RFC3339)}] = true
	}
	fired, err := st.MeterAlertFirings(ctx, env.ID)
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]string{}
	for _, f := range fired {
		k := key{f.AlertID, f.AccountID, f.Groups, f.WindowStart.UTC().Format(time.RFC3339)}
		if !want[k] {
			t.Errorf("firing %+v: its series never reaches the threshold", k)
		}
		delete(want, k)
		events[k.alert+"/"+k.account+"/"+k.groups+"/"+k.start] = f.EventID
	}
	for k := range want {
		t.Errorf("no firing of %+v", k)
	}
	listed := 0
	for _, a := range alerts {
		evs, err := st.EventsForObject(ctx, env, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			var body struct {
				MeterAlert catalog.ThresholdCrossed `json:"meter_alert"`
			}
			if err := json.Unmarshal([]byte(ev.Payload), &body); err != nil {
				t.Fatal(err)
			}
			for _, c := range body.MeterAlert.Crossings {
				gv := make([]*string, len(m.GroupBy))
				for i, k := range m.GroupBy {
					gv[i] = c.Group[k]
				}
				groups, _ := json.Marshal(gv)
				if id := events[a.ID+"/"+c.AccountID+"/"+string(groups)+"/"+c.WindowStart]; id != ev.ID {
					t.Errorf("event %s lists %s %s %s: its firing names event %q", ev.ID, c.AccountID, groups, c.WindowStart, id)
				}
				listed++
			}
		}
	}
	if listed != len(fired) || len(fired) == 0 {
		t.Errorf("%d crossings listed by the events, %d firings", listed, len(fired))
	}
	t.Logf("%d alerts: %d firings, each listed once", len(alerts), len(fired))
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
// the stack's database) and one of workers is running its BackfillMeterPage, and SIGKILLs
// that worker (killRunningActivity).
func killBackfillMidPage(ctx context.Context, t *testing.T, st *store.Store, tc client.Client, meterID string, workers []*prodlike.Proc) *prodlike.Proc {
	t.Helper()
	var seq int64
	w, a := killRunningActivity(ctx, t, tc, wire.MeterBackfillWorkflowID(meterID), workers, 3*time.Minute, func() bool {
		m, err := st.MeterByID(ctx, meterID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == models.MeterReady {
			t.Fatal("the backfill ended before a page was caught running")
		}
		seq = m.BackfillSeq
		return m.BackfillSeq > 0
	})
	t.Logf("backfill at seq %d: SIGKILLed %s (pid %d) running %s attempt %d",
		seq, w.Name, w.Pid(), a.GetActivityType().GetName(), a.GetAttempt())
	return w
}

// oldestCreated is the creation time of the oldest of alerts.
func oldestCreated(alerts []models.MeterAlert) time.Time {
	oldest := time.Now()
	for _, a := range alerts {
		if a.CreatedAt.Before(oldest) {
			oldest = a.CreatedAt
		}
	}
	return oldest
}

package prodlike_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/testkit/prodlike"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

const replayDeliveries = 500

// Issue 15's acceptance on the production shape: a bulk replay of 500 failed deliveries
// is one BulkReplay run (replay-job-<id>), and finishes exactly once when the `revops
// worker` process running it is SIGKILLed mid-page.
//
// The worker to kill is the one Temporal names: the run's pending ReplayPage activity,
// once STARTED, carries its worker's identity (the SDK's default, "<pid>@<host>@"), and
// the test SIGKILLs the process with that pid while the page runs, then starts a
// replacement. The page's activity then never answers; after its start-to-close timeout
// another worker takes it again. The job's row, not the receiver, is the judge of "no
// delivery replayed twice by the job": each event has exactly one successful attempt
// and exactly one delivery run after the failed one. The receiver must see every event;
// a request it sees twice from one run (the killed worker was sending it: Temporal's
// at-least-once) is reported, not hidden.
func TestBulkReplaySurvivesItsWorkerSIGKILLed(t *testing.T) {
	prodlike.Require(t)
	receiver := webhooktest.NewReceiver(t)
	var failing sync.Mutex // guards fail: the receiver answers 500 until the replay
	fail := true
	receiver.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		failing.Lock()
		f := fail
		failing.Unlock()
		if f {
			http.Error(w, "down for the test", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok: " + webhooktest.AckSentence))
	})
	// 50 deliveries a second: pages of 50, the job lasts ~10 s, long enough to catch a
	// page running.
	s, c, _, workers := startShape(t, receiver, "REVOPS_REPLAY_RATE=50")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// 500 failed deliveries: two attempts each, 1 s apart, against a receiver answering
	// 500. Two, not one: the SIGKILL below may also take an attempt of a replayed delivery
	// that the killed worker was running; Temporal counts it when it times out (30 s), as
	// it counts any attempt, and the second attempt delivers it.
	if _, err := c.change(ctx, "POST", "/v1/webhook_endpoints", map[string]any{
		"url": receiver.URL + "/hooks", "retry_policy": map[string]any{
			"maximum_attempts": 2, "initial_interval": "1s", "maximum_interval": "1s"}}); err != nil {
		t.Fatal(err)
	}
	step := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c.clone(i % 2)
			for n := i; n < replayDeliveries; n += 8 {
				if _, err := cl.change(ctx, "POST", "/v1/accounts", map[string]any{"name": fmt.Sprintf("Account %d", n)}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	events := waitEvents(ctx, t, c, "failed", 3*time.Minute)
	if len(events) != replayDeliveries {
		t.Fatalf("%d events, want %d", len(events), replayDeliveries)
	}
	before := seen(receiver)
	t.Logf("%d failed deliveries in %s", len(events), since(step))

	failing.Lock()
	fail = false
	failing.Unlock()
	job, err := c.change(ctx, "POST", "/v1/events/replay", map[string]any{"status": "failed"})
	if err != nil {
		t.Fatal(err)
	}
	if job["matched"] != float64(replayDeliveries) || job["status"] != "running" {
		t.Fatalf("job = %v", job)
	}
	jobID := job["id"].(string)
	wid := wire.BulkReplayWorkflowID(jobID)
	step = time.Now()

	tc, err := client.Dial(client.Options{HostPort: s.Temporal.Address, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()

	// Mid-page: the job has replayed some deliveries, not all, and a ReplayPage activity
	// is running on one of our workers. Kill that process.
	var replayed float64
	victim, cut := killRunningActivity(ctx, t, tc, wid, workers, 2*time.Minute, func() bool {
		if err := c.get(ctx, "/v1/events/replay/"+jobID, &job); err != nil {
			t.Fatal(err)
		}
		if job["status"] == "done" {
			t.Fatalf("the job finished before a page was caught running: %v", job)
		}
		replayed = job["replayed"].(float64)
		return replayed > 0 && replayed < replayDeliveries
	})
	t.Logf("%s into the job (%v of %d replayed): SIGKILLed %s (pid %d) running %s attempt %d",
		since(step), replayed, replayDeliveries, victim.Name, victim.Pid(), cut.GetActivityType().GetName(), cut.GetAttempt())
	s.StartWorker("worker-3")

	deadline := time.Now().Add(3 * time.Minute)
	for job["status"] != "done" {
		if time.Now().After(deadline) {
			t.Fatalf("job not done 3 min after the kill: %v", job)
		}
		time.Sleep(200 * time.Millisecond)
		if err := c.get(ctx, "/v1/events/replay/"+jobID, &job); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("job done %s after it started: %v", since(step), job)
	if job["matched"] != float64(replayDeliveries) || job["replayed"] != float64(replayDeliveries) {
		t.Errorf("finished job = %v, want matched = replayed = %d", job, replayDeliveries)
	}

	// One BulkReplay run for the job, completed, in the visibility the Temporal UI lists.
	// The job is marked done by the run's last activity, so the run closes a moment later.
	waitCtx, cancelWait := context.WithTimeout(ctx, time.Minute)
	err = tc.GetWorkflow(waitCtx, wid, "").Get(waitCtx, nil)
	cancelWait()
	if err != nil {
		t.Fatalf("run of %s: %v", wid, err)
	}
	d, err := tc.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		t.Fatal(err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("%s is %s, want completed", wid, st)
	}
	runs := listRuns(ctx, t, tc, "WorkflowId = '"+wid+"'")
	if len(runs) != 1 || runs[0].GetType().GetName() != wire.BulkReplayWorkflowName {
		t.Errorf("runs of %s: %v, want one %s run", wid, runs, wire.BulkReplayWorkflowName)
	}
	retried := len(retriedPages(ctx, t, tc, wid))
	if retried == 0 {
		t.Errorf("no page attempted again: the kill did not cut a running page")
	}

	// Every event delivered, nothing stuck, the receiver saw each.
	events = waitEvents(ctx, t, c, "delivered", 3*time.Minute)
	if len(events) != replayDeliveries {
		t.Fatalf("%d events delivered, want %d", len(events), replayDeliveries)
	}
	waitBegan := time.Now()
	for {
		after := seen(receiver)
		missing := 0
		for _, e := range events {
			if after[e.ID]-before[e.ID] < 1 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Since(waitBegan) > time.Minute {
			t.Fatalf("%d delivered events never reached the receiver after the replay", missing)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Not replayed twice by the job: per event, the original series of two failed
	// scheduled attempts, then the replay's manual attempts, all in one run, exactly one
	// of them succeeding. The replay's run is usually a new one, but a failed run that has
	// written its status and not yet closed takes the replay's signal itself (fanOut
	// drains its signals before it returns): then the failed series and the replay share
	// one run, which is correct and counted below.
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT event_id,
		count(*) FILTER (WHERE trigger = $1 AND outcome <> $3),
		count(DISTINCT run_id) FILTER (WHERE trigger = $2),
		count(*) FILTER (WHERE outcome = $3),
		count(*) FILTER (WHERE outcome = $3 AND trigger = $2),
		count(DISTINCT run_id) = 1
		FROM delivery_attempts GROUP BY event_id`,
		models.TriggerScheduled, models.TriggerManual, models.AttemptSucceeded)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct {
		failedScheduled, replayRuns, ok, okReplayed int
		oneRun                                      bool
	}
	byEvent := map[string]tally{}
	for rows.Next() {
		var id string
		var tl tally
		if err := rows.Scan(&id, &tl.failedScheduled, &tl.replayRuns, &tl.ok, &tl.okReplayed, &tl.oneRun); err != nil {
			t.Fatal(err)
		}
		byEvent[id] = tl
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	after := seen(receiver)
	dups, sameRun := 0, 0
	for _, e := range events {
		tl := byEvent[e.ID]
		if tl.failedScheduled != 2 || tl.replayRuns != 1 || tl.ok != 1 || tl.okReplayed != 1 {
			t.Errorf("event %s: %d failed scheduled attempts, replay attempts in %d runs, %d successful attempts (%d replayed); "+
				"want 2, 1, 1 (1)", e.ID, tl.failedScheduled, tl.replayRuns, tl.ok, tl.okReplayed)
		}
		if tl.oneRun {
			sameRun++
		}
		dups += max(0, after[e.ID]-before[e.ID]-1)
	}
	t.Logf("%d replays taken by the failed run itself, still open when signalled", sameRun)
	t.Logf("%d deliveries replayed by one BulkReplay run across the SIGKILL of %s (%d page attempts after the first); "+
		"receiver: %d duplicate requests from the replay", replayDeliveries, victim.Name, retried, dups)
}

// waitEvents waits until every event of the changes (operational ones aside) has the
// status, and returns them. Bounded.
func waitEvents(ctx context.Context, t *testing.T, c *apiClient, status string, bound time.Duration) []event {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		listed, err := c.listEvents(ctx)
		// The changes' events only: the failures also make operational ones
		// (delivery-exhausted, endpoint-failing, CONTRACT §23), which no endpoint here
		// subscribes to.
		var events []event
		other := 0
		for _, e := range listed {
			if catalog.Operational(e.Type) {
				continue
			}
			events = append(events, e)
			if e.Status != status {
				other++
			}
		}
		if err == nil && other == 0 && len(events) >= replayDeliveries {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %d of %d events not %s (list error: %v)", bound, other, len(events), status, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// listRuns lists the executions a visibility query matches, waiting (bounded) until the
// completed run is visible: visibility follows the run's close asynchronously.
func listRuns(ctx context.Context, t *testing.T, tc client.Client, query string) []*workflowpb.WorkflowExecutionInfo {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		if err != nil {
			t.Fatal(err)
		}
		runs := resp.GetExecutions()
		closed := len(runs) > 0
		for _, r := range runs {
			closed = closed && r.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		}
		if closed || time.Now().After(deadline) {
			return runs
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// retriedPages reads wid's history: the starts of its activities (its pages) that were a
// second attempt or later, one per page cut short and attempted again.
func retriedPages(ctx context.Context, t *testing.T, tc client.Client, wid string) []*historypb.ActivityTaskStartedEventAttributes {
	t.Helper()
	var again []*historypb.ActivityTaskStartedEventAttributes
	it := tc.GetWorkflowHistory(ctx, wid, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
			again = append(again, a)
		}
	}
	return again
}

package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/revops/revops/activities"
	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// dyingPage is the page store of a worker process that dies at its killAt-th page: the
// page's transaction commits, then the process is gone — no answer to Temporal, no
// dispatch of the page's events — until the test ends. This is the case a SIGKILL makes
// dangerous (the work is done, Temporal does not know it); a kill before the commit
// rolls the page back (store.TestReplayPageCutMidwayDoesNothing).
type dyingPage struct {
	st      replay.PageStore
	killAt  int32
	calls   atomic.Int32
	killed  chan struct{} // closed once the page committed and the process "died"
	release chan struct{} // closed at the test's end
}

func (d *dyingPage) ReplayPage(ctx context.Context, jobID, cursorID string, limit int) (replay.PageResult, error) {
	n := d.calls.Add(1)
	r, err := replay.Page(ctx, d.st, jobID, cursorID, limit)
	if n == d.killAt {
		close(d.killed)
		<-d.release
		return replay.PageResult{}, errors.New("the process is gone")
	}
	return r, err
}

// A bulk replay of 500 failed deliveries through the API is one BulkReplay run
// (replay-job-<job id>). The worker running it dies right after committing its third
// page: the page's activity times out, another worker takes it again and replays
// nothing twice (the job's cursor has moved); the events of its pages reach their
// workflows from the store's after commit, or the sweeper's. The job finishes once, its row has matched = replayed = 500,
// and each event is delivered by exactly one recorded successful attempt.
//
// The dying worker is emulated in-process (its activity never answers and the worker
// is stopped without waiting for it) rather than as a SIGKILLed subprocess: temporaltest
// runs the server in this process, and a subprocess worker would need the revops binary
// built and pointed at it; what a SIGKILL changes for the job — a committed page whose
// activity never completes — is exactly what the hook does.
func TestBulkReplayWorkflowSurvivesAWorkerKilledMidJob(t *testing.T) {
	const n = 500
	s := newStack(t)
	c := s.ts.GetDefaultClient()
	st := s.starter(c)
	ctx := context.Background()
	evs := s.events(n)
	for _, e := range evs {
		if err := s.db.Store.SetEventStatus(ctx, s.db.Env, e.ID, models.EventFailed); err != nil {
			t.Fatal(err)
		}
	}

	// The worker process that will die, with its sweeper.
	dying := &dyingPage{st: s.db.Store, killAt: 3, killed: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(dying.release) })
	w1 := s.workerWith(&activities.BulkReplay{Pages: dying})
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go st.RunSweeper(sweepCtx, 200*time.Millisecond)

	rapi := s.serveAPI(t, s.db.Env, st, 100)

	job, err := rapi.ReplayEvents(ctx, &revops.EventReplayFilter{Status: revops.Ptr(revops.EventStatusFailed)})
	if err != nil {
		t.Fatal(err)
	}
	if job.Matched != n || job.Status != revops.ReplayJobStatusRunning {
		t.Fatalf("job = %+v", job)
	}
	id := job.ID
	select {
	case <-dying.killed:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the job never reached its third page (%d pages)", dying.calls.Load())
	}
	go w1.Stop() // the process is gone: nobody waits for its activity
	w2 := s.worker()
	defer w2.Stop()

	job = waitJobDone(t, rapi, job, 3*time.Minute, 100*time.Millisecond)
	if job.Matched != n || job.Replayed != n || job.Failed != 0 {
		t.Fatalf("finished job = %+v", job)
	}

	// One BulkReplay run, completed, whose third page was attempted twice.
	wid := wire.BulkReplayWorkflowID(id)
	waitRunStatus(t, c, wid, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED)
	waitListed(t, c, "WorkflowType = '"+wire.BulkReplayWorkflowName+"'", 1)
	var res wire.BulkReplayResult
	if err := c.GetWorkflow(ctx, wid, "").Get(ctx, &res); err != nil || res.Replayed != n || res.Matched != n {
		t.Fatalf("run result %+v, %v", res, err)
	}
	hist := runHistory(t, c, wid, "")
	retried := 0
	for _, e := range hist.Events {
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
			retried++
		}
	}
	// At least the dead worker's page; another page may be retried too on a loaded
	// machine (a start-to-close timeout), which replays nothing twice either.
	if retried < 1 {
		t.Errorf("%d page attempts after the first, want the dead worker's page attempted again", retried)
	}

	s.waitStatus(evs, models.EventDelivered, 3*time.Minute)
	ids := make([]string, n)
	for i, e := range evs {
		ids[i] = e.ID
	}
	attempts, err := s.db.Store.AttemptsOf(ctx, s.db.Env, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		ok := 0
		for _, a := range attempts[e.ID] {
			if a.Outcome == models.AttemptSucceeded {
				ok++
			}
		}
		if ok != 1 {
			t.Fatalf("event %s: %d successful attempts, want 1: replayed more than once", e.ID, ok)
		}
	}
	// The receiver may see a request twice if the dead worker was sending it (Temporal's
	// at-least-once); say so rather than hide it.
	perEvent := map[string]int{}
	for _, r := range s.rc.Received() {
		perEvent[r.Header.Get("webhook-id")]++
	}
	dups := 0
	for _, e := range evs {
		if perEvent[e.ID] == 0 {
			t.Errorf("event %s never reached the receiver", e.ID)
		}
		dups += max(0, perEvent[e.ID]-1)
	}
	t.Logf("%d deliveries replayed by one BulkReplay run across a worker death; %d duplicate requests at the receiver", n, dups)

	if dir := os.Getenv(recordEnv); dir != "" {
		writeHistory(t, dir, "bulk_replay_worker_killed", hist, s.secret)
	}
}

// runHistory reads the whole history of a workflow's run (runID "": its latest).
func runHistory(t *testing.T, c client.Client, workflowID, runID string) *historypb.History {
	t.Helper()
	hist := &historypb.History{}
	it := c.GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		hist.Events = append(hist.Events, e)
	}
	return hist
}

// writeHistory writes a run's history where the replay test reads it.
func writeHistory(t *testing.T, dir, name string, hist *historypb.History, secret string) {
	t.Helper()
	js, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	if secretIn(js, secret) {
		t.Fatalf("%s: the history holds a signing secret", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".json")
	if err := os.WriteFile(path, append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s: %d events", path, len(hist.Events))
}

// A job the API could not start (Temporal away when it was recorded) is started by the
// worker's replay-job sweeper, once: a second sweep finds nothing, and asking again for
// a finished job's workflow starts no second run (REJECT_DUPLICATE).
func TestReplayJobSweeperStartsAJobOnce(t *testing.T) {
	s := newStack(t)
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	ctx := context.Background()
	evs := s.events(3)
	for _, e := range evs {
		if err := s.db.Store.SetEventStatus(ctx, s.db.Env, e.ID, models.EventFailed); err != nil {
			t.Fatal(err)
		}
	}
	job, err := replay.CreateJob(ctx, s.db.Store, s.db.Env, events.Filter{Status: models.EventFailed}, time.Now(), idempotency.Reply[replay.JobObject]{})
	if err != nil || job.Matched != 3 || job.WorkflowStartedAt != nil {
		t.Fatalf("job = %+v, %v", job, err)
	}
	jobs := &dispatch.Jobs{Client: c, Store: s.db.Store, SweepAge: time.Nanosecond}
	if n, err := jobs.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("first sweep started %d (%v), want 1", n, err)
	}
	if n, err := jobs.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep started %d (%v), want 0", n, err)
	}
	wid := wire.BulkReplayWorkflowID(job.ID)
	if err := c.GetWorkflow(ctx, wid, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	first, err := c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Start(ctx, store.ReplayJobOf(job)); err != nil {
		t.Fatalf("asking again for a finished job's workflow: %v", err)
	}
	latest, err := c.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil || latest.GetWorkflowExecutionInfo().GetExecution().GetRunId() != first.GetWorkflowExecutionInfo().GetExecution().GetRunId() {
		t.Fatalf("a second run of %s was started (%v)", wid, err)
	}
	waitListed(t, c, "WorkflowId = '"+wid+"'", 1)
	row, err := s.db.Store.ReplayJob(ctx, s.db.Env, job.ID)
	if err != nil || row.Status != models.ReplayJobDone || row.Replayed != 3 || row.WorkflowStartedAt == nil {
		t.Fatalf("job row = %+v, %v", row, err)
	}
	s.waitStatus(evs, models.EventDelivered, time.Minute)
}

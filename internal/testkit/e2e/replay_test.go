package e2e

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/revops/revops/activities"
	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/replaycli"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// replayAPI is the real API over the stack's database, replaying through the real starter,
// and a client of it that does not retry (a 5xx is the test's to see).
type replayAPI struct {
	*revops.Client
	URL, Key string
}

func (s *stack) api(st *dispatch.Starter) replayAPI {
	s.t.Helper()
	return s.serveAPI(s.t, s.db.Env, st, 1000)
}

// serveAPI serves the real API over the stack's database until t ends, with a new secret
// key of env. st dispatches and its replay jobs send rate deliveries a second; nil leaves
// every start to the sweeper.
func (s *stack) serveAPI(t *testing.T, env models.Env, st *dispatch.Starter, rate float64) replayAPI {
	t.Helper()
	deps := apitest.Deps(apitest.Config(t), s.db.Store)
	k, err := deps.Keys.Create(context.Background(), env.OrganizationID, env.Name, "secret")
	if err != nil {
		t.Fatal(err)
	}
	if st != nil {
		// As internal/app wires them: replays reach their workflows through the queue the
		// store hands every commit to, and jobs start after their commit.
		q := apitest.Queue(&deps, st)
		jobs := &dispatch.Jobs{Client: st.Client, Store: s.db.Store, Rate: rate}
		s.db.Store.SetAfterCommit(dispatch.AfterCommit{Events: q, Jobs: jobs})
		// The API starts a job detached after its commit and leaves a failed start to the
		// worker's sweeper: without one, a start cut short on a loaded machine would leave
		// the job (and `revops webhooks replay --failed`, which waits for it) forever.
		sweepCtx, stopSweeper := context.WithCancel(context.Background())
		t.Cleanup(stopSweeper)
		go jobs.RunSweeper(sweepCtx, 500*time.Millisecond)
	}
	srv := apitest.Serve(t, deps)
	c, err := revops.NewClient(revops.WithBaseURL(srv.URL), revops.WithAPIKey(k.Plain), revops.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return replayAPI{Client: c, URL: srv.URL, Key: k.Plain}
}

func (s *stack) failing() {
	s.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
}

func (s *stack) acknowledging() { s.rc.SetRespond(nil) }

// summary reads the StaticSummary of a run.
func summary(t *testing.T, c client.Client, workflowID, runID string) string {
	t.Helper()
	desc, err := c.DescribeWorkflowExecution(context.Background(), workflowID, runID)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if p := desc.GetExecutionConfig().GetUserMetadata().GetSummary(); p != nil {
		if err := converter.GetDefaultDataConverter().FromPayload(p, &out); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// One Temporal server for every replay scenario: starting one costs seconds.
func TestReplay(t *testing.T) {
	s := newStack(t)
	c := s.ts.GetDefaultClient()
	fast := s.starter(c)
	fast.RetryInterval = 50 * time.Millisecond // six attempts fail within a second
	// Bulk replay starts 8 runs at once; under -race on a loaded 2-core machine a start can
	// take seconds, and a start cut by its timeout would count as not replayed (no sweeper
	// runs here to take it later). The API wires it as the store's after commit, which the
	// worker's pages hand their events to as well.
	fast.StartTimeout = 15 * time.Second
	w := s.workerWith(&activities.BulkReplay{Store: s.db.Store})
	defer w.Stop()
	rapi := s.api(fast)
	host := strings.TrimPrefix(s.rc.URL, "https://")

	t.Run("failed event replayed", func(t *testing.T) { replayFailedEvent(t, s, c, fast, rapi, host) })
	t.Run("conflict while running", func(t *testing.T) { replayWhileRunning(t, s, c, rapi) })
	t.Run("bulk", func(t *testing.T) { bulkReplay(t, s, fast, rapi) })
	t.Run("cli", func(t *testing.T) { replayCLI(t, s, fast, rapi) })
}

func replayFailedEvent(t *testing.T, s *stack, c client.Client, st *dispatch.Starter, rapi replayAPI, host string) {
	ctx := context.Background()
	s.failing()
	evs := s.events(1)
	st.Dispatch(ctx, evs)
	s.waitStatus(evs, models.EventFailed, time.Minute)
	first := s.db.Load(t, evs[0].ID)
	want := "deal-updated · deal " + first.ObjectID[:8] + " → " + host
	if got := summary(t, c, first.WorkflowID, first.RunID); got != want {
		t.Errorf("summary of the scheduled run = %q, want %q", got, want)
	}

	s.acknowledging()
	out, err := rapi.ReplayEvent(ctx, first.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 202 before Temporal is reached: the event is pending again, its run comes after.
	if out.ID != first.ID || string(out.Status) != models.EventPending {
		t.Fatalf("replay answered %+v", out)
	}
	s.waitStatus(evs, models.EventDelivered, time.Minute)
	after := s.db.Load(t, first.ID)
	if after.RunID == first.RunID || after.WorkflowID != first.WorkflowID {
		t.Fatalf("run after replay %s/%s, before %s/%s", after.WorkflowID, after.RunID, first.WorkflowID, first.RunID)
	}
	as, err := s.db.Store.DeliveryAttempts(ctx, s.db.Env, first.ID)
	if err != nil || len(as) != wire.MaxAttempts+1 {
		t.Fatalf("%d attempts (err %v), want %d", len(as), err, wire.MaxAttempts+1)
	}
	last := as[len(as)-1]
	if last.Trigger != models.TriggerManual || last.Outcome != models.AttemptSucceeded || last.RunID != after.RunID || last.Number != 1 {
		t.Errorf("replay attempt = %+v", last)
	}
	if got := summary(t, c, after.WorkflowID, after.RunID); got != want+" (replay)" {
		t.Errorf("summary of the replay run = %q", got)
	}
	rcv := s.rc.Received()
	if got := rcv[len(rcv)-1]; got.Header.Get("webhook-id") != first.ID || string(got.Body) != first.Payload {
		t.Errorf("replay sent another event or body: %s", got.Body)
	}
	// The Temporal UI's list filters of the README find it.
	waitListed(t, c, "RevopsObjectId = '"+first.ObjectID+"'", 2)
}

func replayWhileRunning(t *testing.T, s *stack, c client.Client, rapi replayAPI) {
	ctx := context.Background()
	s.failing()
	slow := s.starter(c)
	slow.RetryInterval = time.Hour // the run waits for its second attempt
	evs := s.events(1)
	slow.Dispatch(ctx, evs)
	s.waitStatus(evs, models.EventRetrying, time.Minute)
	_, err := rapi.ReplayEvent(ctx, evs[0].ID, nil)
	if ae := (*revops.Error)(nil); !errors.As(err, &ae) || ae.Status != http.StatusConflict || ae.Code != "delivery_in_progress" {
		t.Fatalf("replay while running: %v, want 409 delivery_in_progress", err)
	}
	if ev := s.db.Load(t, evs[0].ID); ev.Status != models.EventRetrying {
		t.Errorf("a refused replay changed the event to %s", ev.Status)
	}
	if err := c.TerminateWorkflow(ctx, wire.WorkflowID(evs[0].ID), "", "test over"); err != nil {
		t.Fatal(err)
	}
	waitRunStatus(t, c, wire.WorkflowID(evs[0].ID), enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED)
}

func bulkReplay(t *testing.T, s *stack, st *dispatch.Starter, rapi replayAPI) {
	ctx := context.Background()
	since := time.Now().UTC().Add(-time.Second)
	s.failing()
	const n = 20
	evs := s.events(n)
	st.Dispatch(ctx, evs)
	// 20 runs of six attempts each, plus the bookkeeping of the fan-out: under -race on
	// a loaded 2-core machine this alone has taken ~25 s.
	s.waitStatus(evs, models.EventFailed, 90*time.Second)

	s.acknowledging()
	job, err := rapi.ReplayEvents(ctx, &revops.EventReplayFilter{Status: revops.Ptr(revops.EventStatusFailed), CreatedAfter: revops.Value(since)})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	job = waitJobDone(t, rapi, job, 90*time.Second, 50*time.Millisecond)
	t.Logf("bulk replay of %d events: job done in %v", n, time.Since(started))
	if job.Matched != n || job.Replayed != n || job.Failed != 0 {
		t.Fatalf("job = %+v", job)
	}
	s.waitStatus(evs, models.EventDelivered, 90*time.Second)
}

// waitJobDone polls a replay job, as POST /v1/events/replay answered it, every `every`
// until it is done and returns it; a job not done within `within` fails the test.
func waitJobDone(t *testing.T, rapi replayAPI, job *revops.ReplayJob, within, every time.Duration) *revops.ReplayJob {
	t.Helper()
	deadline := time.Now().Add(within)
	for job.Status != revops.ReplayJobStatusDone {
		if time.Now().After(deadline) {
			t.Fatalf("job not done: %+v", job)
		}
		time.Sleep(every)
		var err error
		if job, err = rapi.GetReplayJob(context.Background(), job.ID); err != nil {
			t.Fatal(err)
		}
	}
	return job
}

// waitListed waits until the visibility query lists want runs.
func waitListed(t *testing.T, c client.Client, query string, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a loaded machine; it returns as soon as it holds
	for {
		res, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err == nil && len(res.GetExecutions()) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("query %q: %d runs (err %v), want %d", query, len(res.GetExecutions()), err, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The `revops webhooks replay` command against the real API and Temporal.
func replayCLI(t *testing.T, s *stack, st *dispatch.Starter, rapi replayAPI) {
	ctx := context.Background()
	s.failing()
	evs := s.events(3)
	st.Dispatch(ctx, evs)
	s.waitStatus(evs, models.EventFailed, time.Minute)
	s.acknowledging()
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		args = append([]string{"--api", rapi.URL, "--api-key", rapi.Key, "--poll", "20ms"}, args...)
		if err := replaycli.Run(ctx, args, &out, &errOut); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	if out := run(evs[0].ID); !strings.Contains(out, "replayed 1 of 1") {
		t.Errorf("by id: %s", out)
	}
	s.waitStatus(evs[:1], models.EventDelivered, time.Minute)
	if out := run("--failed", "--since", "10m", "--dry-run"); !strings.Contains(out, "2 failed event(s) would be replayed") {
		t.Errorf("dry run: %s", out)
	}
	if out := run("--failed", "--since", "10m"); !strings.Contains(out, "matched 2, replayed 2, not replayed 0") {
		t.Errorf("bulk: %s", out)
	}
	s.waitStatus(evs, models.EventDelivered, time.Minute)
}

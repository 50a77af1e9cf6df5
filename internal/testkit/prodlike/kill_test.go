package prodlike_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/testkit/prodlike"
)

// killRunningActivity SIGKILLs the worker process running an activity of the workflow
// wid, once ready says the run is mid-job (ready may end the test when it never will be),
// and returns the worker and the activity it cut.
//
// The worker is the one Temporal names: a STARTED pending activity carries its worker's
// identity, "<pid>@<host>@" by the SDK's default. Describe is a snapshot, and a short
// page can finish between its answer and a signal: the worker is first frozen (SIGSTOP),
// the run described again a moment later, and the worker killed only when the same
// attempt is still started on it (a frozen process finishes nothing); else it is thawed
// and the watch goes on.
func killRunningActivity(ctx context.Context, t *testing.T, tc client.Client, wid string, workers []*prodlike.Proc,
	within time.Duration, ready func() bool) (*prodlike.Proc, *workflowpb.PendingActivityInfo) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no activity of %s seen running mid-job in %s", wid, within)
		}
		if ready() {
			if w, a := startedOn(ctx, tc, wid, workers); w != nil {
				w.Freeze()
				time.Sleep(300 * time.Millisecond) // what it sent before the stop reaches the server
				if w2, a2 := startedOn(ctx, tc, wid, workers); w2 == w && a2.GetActivityId() == a.GetActivityId() &&
					a2.GetAttempt() == a.GetAttempt() {
					w.Kill()
					return w, a2
				}
				w.Thaw()
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startedOn is a started activity of the run wid and the process of workers running it
// (nil when none is).
func startedOn(ctx context.Context, tc client.Client, wid string, workers []*prodlike.Proc) (*prodlike.Proc, *workflowpb.PendingActivityInfo) {
	d, err := tc.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return nil, nil
	}
	for _, a := range d.GetPendingActivities() {
		if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
			continue
		}
		pid, _ := strconv.Atoi(strings.SplitN(a.GetLastWorkerIdentity(), "@", 2)[0])
		for _, w := range workers {
			if w.Pid() == pid {
				return w, a
			}
		}
	}
	return nil, nil
}

package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// A replay made while a failed series is being settled (MarkDeliveryFailed slow: its
// worker was killed, the activity retried) finds the delivery pending but still running
// here. The settling leaves the replayed delivery pending, and once it has settled the
// run looks again and gives the replay a new series: the replay is not lost (the bulk
// replay that left 1 of 500 events failed).
func TestFanOutReplayWhileSettlingGetsANewSeries(t *testing.T) {
	for _, mode := range []struct {
		name    string
		inInput bool
		asks    int // PendingDeliveries calls: the signal's, the recheck's, and the start's when asked
	}{{"deliveries in input", true, 2}, {"deliveries asked", false, 3}} {
		t.Run(mode.name, func(t *testing.T) {
			a := &fakeDelivery{id: "A", policy: oneSecondThrice, succeedAt: 1, onReplay: true}
			env, db := newFanOutEnv(t, a)
			db.markDelay = 8 * time.Second // the series fails at 2s, is settled at 10s
			env.RegisterDelayedCallback(func() {
				db.replay(a)
				env.SignalWorkflow(wire.SignalReplay, nil)
			}, 5*time.Second)
			rechecks := 0
			env.OnGetVersion(changeRecheckReplayed, workflow.DefaultVersion, 1).
				Run(func(mock.Arguments) { rechecks++ }).Return(workflow.Version(1)).Maybe()
			in := input()
			if mode.inInput {
				in = inputWith(a)
			}
			start := env.Now()
			env.ExecuteWorkflow(WebhookDelivery, in)
			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			checkRunError(t, env.GetWorkflowError(), false)

			want := []time.Duration{0, time.Second, 2 * time.Second, 10 * time.Second}
			var got []time.Duration
			for _, tm := range a.times {
				got = append(got, tm.Sub(start))
			}
			if !equalDurations(got, want) || a.triggers[len(a.triggers)-1] != models.TriggerManual {
				t.Fatalf("A attempts at %v (%v), want %v, the last one manual (the replay's series, once settled)", got, a.triggers, want)
			}
			if a.status != models.EventDelivered {
				t.Errorf("A %s, want delivered", a.status)
			}
			if len(a.marks) != 1 || a.marks[0].Replays == nil || *a.marks[0].Replays != 0 {
				t.Errorf("marks %+v, want one, of the series that read replays 0", a.marks)
			}
			if rechecks != 1 {
				t.Errorf("change %s asked %d times, want once (the skip)", changeRecheckReplayed, rechecks)
			}
			if db.asks != mode.asks {
				t.Errorf("PendingDeliveries asked %d times, want %d", db.asks, mode.asks)
			}
		})
	}
}

// A run whose history recorded no recheck marker (an earlier release skipped the replayed
// delivery) keeps doing so: the replay is not looked up again.
func TestFanOutReplayWhileSettlingBeforeTheChange(t *testing.T) {
	a := &fakeDelivery{id: "A", policy: oneSecondThrice, succeedAt: 1, onReplay: true}
	env, db := newFanOutEnv(t, a)
	db.markDelay = 8 * time.Second
	env.RegisterDelayedCallback(func() {
		db.replay(a)
		env.SignalWorkflow(wire.SignalReplay, nil)
	}, 5*time.Second)
	env.OnGetVersion(changeRecheckReplayed, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	env.ExecuteWorkflow(WebhookDelivery, inputWith(a))
	checkRunError(t, env.GetWorkflowError(), true)
	if len(a.times) != 3 || db.asks != 1 {
		t.Fatalf("A sent %d times, PendingDeliveries asked %d; want 3, 1 (no recheck)", len(a.times), db.asks)
	}
}

// A replay signal that finds no running delivery pending again asks no change version:
// runs without the race record no marker and upsert no search attribute for it. A
// running delivery still pending with its series' own replay count (no attempt recorded
// yet) is not a replay either.
func TestFanOutNoRecheckWithoutAReplayWhileRunning(t *testing.T) {
	tests := []struct {
		name  string
		setup func(env *testsuite.TestWorkflowEnvironment, db *fakeDB, a, b *fakeDelivery)
	}{
		{"replay of a delivery no longer running, another one retrying", func(env *testsuite.TestWorkflowEnvironment, db *fakeDB, a, b *fakeDelivery) {
			env.RegisterDelayedCallback(func() {
				db.replay(a)
				env.SignalWorkflow(wire.SignalReplay, nil)
			}, 30*time.Minute)
		}},
		{"signal while a running delivery is still pending from its start", func(env *testsuite.TestWorkflowEnvironment, db *fakeDB, a, b *fakeDelivery) {
			db.during = func(d *fakeDelivery, attempt int32) {
				if d.id != "B" || attempt != 1 {
					return
				}
				db.mu.Lock()
				d.status = models.EventPending // as if its first attempt were not recorded yet
				db.mu.Unlock()
				env.SignalWorkflow(wire.SignalReplay, nil)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeDelivery{id: "A", policy: oneSecondThrice, succeedAt: 1, onReplay: true}
			b := &fakeDelivery{id: "B", policy: models.DefaultRetryPolicy, succeedAt: 3}
			env, db := newFanOutEnv(t, a, b)
			tt.setup(env, db, a, b)
			asked := 0
			env.OnGetVersion(changeRecheckReplayed, workflow.DefaultVersion, 1).
				Run(func(mock.Arguments) { asked++ }).Return(workflow.Version(1)).Maybe()
			env.ExecuteWorkflow(WebhookDelivery, inputWith(a, b))
			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			if asked != 0 {
				t.Fatalf("change %s asked %d times, want never", changeRecheckReplayed, asked)
			}
			if len(b.times) != 3 {
				t.Errorf("B sent %d times, want 3 (one series)", len(b.times))
			}
		})
	}
}

// replayedSince: a higher count is a replay; an equal one is the series' own pending
// state; a count missing on either side (read by an earlier release) counts as a replay,
// so the run looks again rather than lose one.
func TestReplayedSince(t *testing.T) {
	n := func(v int) *int { return &v }
	tests := []struct {
		name         string
		running, now *int
		want         bool
	}{
		{"same count", n(1), n(1), false},
		{"replayed since", n(1), n(2), true},
		{"series read by an earlier release", nil, n(2), true},
		{"no count now", n(1), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replayedSince(models.PendingDelivery{ID: "A", Replays: tt.running}, models.PendingDelivery{ID: "A", Replays: tt.now}); got != tt.want {
				t.Errorf("replayedSince = %v, want %v", got, tt.want)
			}
		})
	}
}

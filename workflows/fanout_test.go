package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// fakeDelivery is one delivery as the mocked activities see it in the "database".
type fakeDelivery struct {
	id        string
	policy    models.RetryPolicy
	succeedAt int  // attempt of a series that is acknowledged (0: never)
	onReplay  bool // only series started by a replay are acknowledged
	disabled  bool // its endpoint is disabled: every attempt ends endpoint_disabled
	gone      bool // its receiver answers 410 Gone
	status    string
	replays   int         // replays that put it back to pending, as the store counts them
	times     []time.Time // of every attempt, in workflow time
	triggers  []string
	marks     []activities.MarkFailedInput
}

// fakeDB stands in for the store behind the mocked activities. The test environment may
// run activities on other goroutines, hence the lock.
type fakeDB struct {
	env  *testsuite.TestWorkflowEnvironment
	mu   sync.Mutex
	all  []*fakeDelivery
	asks int // PendingDeliveries calls
	// during, when set, runs inside the attempt (with the lock released) — a replay
	// made while a delivery is being attempted.
	during func(d *fakeDelivery, attempt int32)
	// single answers attempts of the single-endpoint path (no DeliveryID).
	single func() (activities.DeliverResult, error)
	// markDelay is how long MarkDeliveryFailed takes, in workflow time.
	markDelay time.Duration
}

func (db *fakeDB) find(id string) *fakeDelivery {
	for _, d := range db.all {
		if d.id == id {
			return d
		}
	}
	return nil
}

// replay does to the fake what replay.Deliveries does: the deliveries go (back) to
// pending, counting the replay, new ones appear.
func (db *fakeDB) replay(ds ...*fakeDelivery) {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, d := range ds {
		if db.find(d.id) == nil {
			db.all = append(db.all, d)
		} else {
			d.replays++
		}
		d.status = models.EventPending
	}
}

// delivery is d as PendingDeliveries and the dispatcher hand it to the workflow.
func (d *fakeDelivery) delivery() models.PendingDelivery {
	replays := d.replays
	return models.PendingDelivery{ID: d.id, EndpointID: "ep-" + d.id, Policy: d.policy, Replays: &replays}
}

func newFanOutEnv(t *testing.T, ds ...*fakeDelivery) (*testsuite.TestWorkflowEnvironment, *fakeDB) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	Register(env, &activities.Delivery{})
	db := &fakeDB{env: env, all: ds}
	for _, d := range ds {
		d.status = models.EventPending
	}
	var a *activities.Delivery
	env.OnActivity(a.PendingDeliveries, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PendingInput) ([]models.PendingDelivery, error) {
		db.mu.Lock()
		defer db.mu.Unlock()
		db.asks++
		var out []models.PendingDelivery
		for _, d := range db.all {
			if d.status == models.EventPending {
				out = append(out, d.delivery())
			}
		}
		return out, nil
	})
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.DeliverInput) (activities.DeliverResult, error) {
		if in.DeliveryID == "" && db.single != nil {
			return db.single()
		}
		attempt := activity.GetInfo(ctx).Attempt
		db.mu.Lock()
		d := db.find(in.DeliveryID)
		if d == nil || in.EventID != input().EventID {
			db.mu.Unlock()
			return activities.DeliverResult{}, temporal.NewNonRetryableApplicationError("unknown delivery", "test", nil)
		}
		d.times = append(d.times, env.Now())
		d.triggers = append(d.triggers, in.Trigger)
		ok := d.succeedAt > 0 && int(attempt) >= d.succeedAt && (!d.onReplay || in.Trigger == models.TriggerManual)
		switch {
		case ok:
			d.status = models.EventDelivered
		case attempt >= in.MaxAttempts:
			d.status = models.EventFailed
		default:
			d.status = models.EventRetrying
		}
		if d.disabled {
			d.status = models.EventFailed
			db.mu.Unlock()
			return activities.DeliverResult{}, temporal.NewNonRetryableApplicationError("webhook endpoint disabled", activities.ErrTypeEndpointDisabled, nil)
		}
		if d.gone {
			d.status = models.EventFailed
			db.mu.Unlock()
			return activities.DeliverResult{}, temporal.NewNonRetryableApplicationError(models.DeliveryGone, activities.ErrTypeGone, nil)
		}
		during := db.during
		db.mu.Unlock()
		if during != nil {
			during(d, attempt)
		}
		if ok {
			return activities.DeliverResult{}, nil
		}
		return activities.DeliverResult{}, temporal.NewApplicationError("status 503", activities.ErrTypeDeliveryFailed)
	}).Maybe()
	env.OnActivity(a.MarkDeliveryFailed, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.MarkFailedInput) error {
		db.mu.Lock()
		defer db.mu.Unlock()
		if d := db.find(in.DeliveryID); d != nil {
			d.marks = append(d.marks, in)
			// As the store does: a delivery replayed since its series read it stays pending.
			if in.Replays == nil || *in.Replays == d.replays {
				d.status = models.EventFailed
			}
			return nil
		}
		t.Errorf("MarkDeliveryFailed of unknown delivery %+v", in)
		return nil
	}).AfterFn(func() time.Duration {
		db.mu.Lock()
		defer db.mu.Unlock()
		return db.markDelay
	}).Maybe()
	return env, db
}

// Policies of the tests: the default (6 attempts an hour apart) and shorter ones.
var (
	oneSecondThrice = models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 1, MaximumIntervalMS: 1000, MaximumAttempts: 3}
	doubling        = models.RetryPolicy{InitialIntervalMS: 10_000, BackoffCoefficient: 2, MaximumIntervalMS: 30_000, MaximumAttempts: 4}
)

// The fan-out (CONTRACT §13): every delivery of the event runs at once, each under the
// retry policy it copied from its endpoint; the run ends Failed when any delivery did.
func TestFanOutDeliveries(t *testing.T) {
	type want struct {
		gaps  []time.Duration // between consecutive attempts; its length + 1 attempts
		marks int             // MarkDeliveryFailed calls
	}
	tests := []struct {
		name       string
		deliveries []*fakeDelivery
		want       map[string]want
		failed     bool
	}{
		{
			name:       "one delivery, default policy: six attempts an hour apart, then failed",
			deliveries: []*fakeDelivery{{id: "A", policy: models.DefaultRetryPolicy}},
			want:       map[string]want{"A": {gaps: []time.Duration{time.Hour, time.Hour, time.Hour, time.Hour, time.Hour}, marks: 1}},
			failed:     true,
		},
		{
			name: "three deliveries, each under its own policy, concurrently",
			deliveries: []*fakeDelivery{
				{id: "A", policy: oneSecondThrice},
				{id: "B", policy: models.DefaultRetryPolicy, succeedAt: 2},
				{id: "C", policy: doubling},
			},
			want: map[string]want{
				"A": {gaps: []time.Duration{time.Second, time.Second}, marks: 1},
				"B": {gaps: []time.Duration{time.Hour}},
				"C": {gaps: []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}, marks: 1},
			},
			failed: true,
		},
		{
			name: "all delivered: the run completes",
			deliveries: []*fakeDelivery{
				{id: "A", policy: oneSecondThrice, succeedAt: 3},
				{id: "B", policy: models.DefaultRetryPolicy, succeedAt: 1},
			},
			want: map[string]want{"A": {gaps: []time.Duration{time.Second, time.Second}}, "B": {}},
		},
		{name: "no delivery: nothing to send", want: map[string]want{}},
	}
	for _, tt := range tests {
		// Each case twice: the deliveries in the input (the dispatcher read them) and an
		// input without them (a run started by an earlier release, or a dispatcher that
		// could not read them), where the run asks PendingDeliveries once.
		for _, mode := range []struct {
			name    string
			inInput bool
		}{{"deliveries in input", true}, {"deliveries asked", false}} {
			t.Run(tt.name+"/"+mode.name, func(t *testing.T) {
				ds := make([]*fakeDelivery, len(tt.deliveries))
				for i, d := range tt.deliveries {
					c := *d
					ds[i] = &c
				}
				env, db := newFanOutEnv(t, ds...)
				in, asks := input(), 1
				if mode.inInput && len(ds) > 0 {
					// An empty list is no list: the run asks, as an earlier release's would.
					in, asks = inputWith(ds...), 0
				}
				start := env.Now()
				env.ExecuteWorkflow(WebhookDelivery, in)
				if !env.IsWorkflowCompleted() {
					t.Fatal("workflow did not complete")
				}
				checkRunError(t, env.GetWorkflowError(), tt.failed)
				for _, d := range ds {
					w := tt.want[d.id]
					if len(d.times) != len(w.gaps)+1 {
						t.Fatalf("%s: %d attempts, want %d", d.id, len(d.times), len(w.gaps)+1)
					}
					if first := d.times[0].Sub(start); first != 0 {
						t.Errorf("%s: first attempt after %v, want at once (concurrently)", d.id, first)
					}
					for i, gap := range w.gaps {
						if got := d.times[i+1].Sub(d.times[i]); got != gap {
							t.Errorf("%s: gap before attempt %d = %v, want %v", d.id, i+2, got, gap)
						}
					}
					if len(d.marks) != w.marks {
						t.Errorf("%s: marked failed %d times, want %d", d.id, len(d.marks), w.marks)
					}
					for _, m := range d.marks {
						if m.EventID != input().EventID || m.DeliveryID != d.id {
							t.Errorf("%s: marked %+v", d.id, m)
						}
					}
				}
				if db.asks != asks {
					t.Errorf("PendingDeliveries asked %d times, want %d", db.asks, asks)
				}
			})
		}
	}
}

// inputWith is the input the dispatcher gives a run of the event with these pending
// deliveries.
func inputWith(ds ...*fakeDelivery) wire.DeliveryInput {
	in := input()
	for _, d := range ds {
		in.Deliveries = append(in.Deliveries, d.delivery())
	}
	return in
}

// With the deliveries in its input the run starts them in its first workflow task,
// without asking the database; a replay signal — one that came with the start too, the
// input possibly read before that replay committed — still makes it ask for the ones
// pending since, and each delivery runs once at a time.
func TestFanOutDeliveriesInInput(t *testing.T) {
	tests := []struct {
		name        string
		signal      bool   // SignalWithStart: a replay signal comes with the start
		replayFirst bool   // B was replayed after the dispatcher read the input
		sentB       int    // times B is sent
		asks        int    // PendingDeliveries calls
		triggerA    string // of A's attempt
	}{
		{name: "first start: no lookup", sentB: 0, asks: 0, triggerA: models.TriggerScheduled},
		{name: "signal with start, nothing replayed since", signal: true, sentB: 0, asks: 1, triggerA: models.TriggerManual},
		{name: "signal with start, a replay committed after the read", signal: true, replayFirst: true, sentB: 1, asks: 1, triggerA: models.TriggerManual},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeDelivery{id: "A", policy: oneSecondThrice, succeedAt: 1}
			b := &fakeDelivery{id: "B", policy: oneSecondThrice, succeedAt: 1}
			env, db := newFanOutEnv(t, a)
			in := inputWith(a)
			if tt.signal {
				in.Trigger = models.TriggerManual
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(wire.SignalReplay, nil) }, 0)
			}
			if tt.replayFirst {
				db.replay(b)
			}
			env.ExecuteWorkflow(WebhookDelivery, in)
			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			checkRunError(t, env.GetWorkflowError(), false)
			if len(a.times) != 1 || a.triggers[0] != tt.triggerA {
				t.Errorf("A sent %d times (%v), want once, %s", len(a.times), a.triggers, tt.triggerA)
			}
			if len(b.times) != tt.sentB {
				t.Errorf("B sent %d times, want %d", len(b.times), tt.sentB)
			}
			if db.asks != tt.asks {
				t.Errorf("PendingDeliveries asked %d times, want %d", db.asks, tt.asks)
			}
		})
	}
}

// A new run asks one change version (fanout 2: every first GetVersion records a marker
// and upserts TemporalChangeVersion, a visibility write); a run that recorded fanout 1
// asks deliveries-in-input after it, as its release did, and takes its input or asks the
// database accordingly.
func TestFanOutChangeVersions(t *testing.T) {
	tests := []struct {
		name     string
		fanout   workflow.Version
		inInput  workflow.Version // what deliveries-in-input answers, when asked
		askedDII bool
		asks     int // PendingDeliveries calls
	}{
		{name: "new run", fanout: fanOutOneMarker, askedDII: false, asks: 0},
		{name: "fanout 1, deliveries in input", fanout: fanOutFirst, inInput: 1, askedDII: true, asks: 0},
		{name: "fanout 1, before deliveries in input", fanout: fanOutFirst, inInput: workflow.DefaultVersion, askedDII: true, asks: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeDelivery{id: "A", policy: oneSecondThrice, succeedAt: 1}
			env, db := newFanOutEnv(t, a)
			env.OnGetVersion(changeFanOut, workflow.DefaultVersion, fanOutOneMarker).Return(tt.fanout)
			asked := false
			env.OnGetVersion(changeDeliveriesInInput, workflow.DefaultVersion, 1).
				Run(func(mock.Arguments) { asked = true }).Return(tt.inInput).Maybe()
			env.ExecuteWorkflow(WebhookDelivery, inputWith(a))
			checkRunError(t, env.GetWorkflowError(), false)
			if asked != tt.askedDII || db.asks != tt.asks || len(a.times) != 1 {
				t.Fatalf("deliveries-in-input asked %v, PendingDeliveries asked %d, A sent %d; want %v, %d, 1",
					asked, db.asks, len(a.times), tt.askedDII, tt.asks)
			}
		})
	}
}

// checkRunError: a run ends Failed (deliveries_failed) iff a delivery ended failed.
func checkRunError(t *testing.T, err error, failed bool) {
	t.Helper()
	var appErr *temporal.ApplicationError
	switch {
	case failed && (!errors.As(err, &appErr) || appErr.Type() != ErrTypeDeliveriesFailed):
		t.Fatalf("workflow error = %v, want %s", err, ErrTypeDeliveriesFailed)
	case !failed && err != nil:
		t.Fatalf("workflow error = %v, want none", err)
	}
}

// A replay signal mid-run starts the deliveries that became pending — a failed one
// replayed, one to an endpoint subscribed since — with trigger manual, while another
// delivery keeps retrying under its own policy; a delivery that failed and was then
// delivered by its replay leaves the run successful.
func TestFanOutReplaySignalMidRun(t *testing.T) {
	a := &fakeDelivery{id: "A", policy: oneSecondThrice, succeedAt: 1, onReplay: true}
	b := &fakeDelivery{id: "B", policy: models.DefaultRetryPolicy, succeedAt: 3}
	c := &fakeDelivery{id: "C", policy: oneSecondThrice, succeedAt: 1}
	env, db := newFanOutEnv(t, a, b)
	env.RegisterDelayedCallback(func() {
		db.replay(a, c)
		env.SignalWorkflow(wire.SignalReplay, nil)
	}, 30*time.Minute)
	start := env.Now()
	env.ExecuteWorkflow(WebhookDelivery, input())
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	checkRunError(t, env.GetWorkflowError(), false)

	at := func(d *fakeDelivery) []time.Duration {
		var out []time.Duration
		for _, tm := range d.times {
			out = append(out, tm.Sub(start))
		}
		return out
	}
	wantA := []time.Duration{0, time.Second, 2 * time.Second, 30 * time.Minute}
	if got := at(a); !equalDurations(got, wantA) || a.triggers[3] != models.TriggerManual || a.triggers[0] != models.TriggerScheduled {
		t.Errorf("A attempts at %v (%v), want %v, the last one manual", got, a.triggers, wantA)
	}
	if got := at(c); !equalDurations(got, []time.Duration{30 * time.Minute}) || c.triggers[0] != models.TriggerManual {
		t.Errorf("C attempts at %v (%v), want once at 30m, manual", got, c.triggers)
	}
	if got := at(b); !equalDurations(got, []time.Duration{0, time.Hour, 2 * time.Hour}) {
		t.Errorf("B attempts at %v, want 0, 1h, 2h (its own policy, undisturbed)", got)
	}
	if len(a.marks) != 1 || len(b.marks)+len(c.marks) != 0 {
		t.Errorf("marks A %d, B %d, C %d; want 1, 0, 0", len(a.marks), len(b.marks), len(c.marks))
	}
	if db.asks != 2 {
		t.Errorf("PendingDeliveries asked %d times, want 2 (start, signal)", db.asks)
	}
}

// A replay signalled while the run's last delivery is being attempted is taken by this
// run before it closes (drained), not lost with it; a signal that finds nothing pending
// ends the run after one more look.
func TestFanOutDrainsSignalsBeforeClosing(t *testing.T) {
	tests := []struct {
		name     string
		replayed bool // the signal comes with a delivery made pending
		asks     int
	}{
		{"replay of another delivery", true, 2},
		{"signal with nothing pending", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fakeDelivery{id: "A", policy: models.DefaultRetryPolicy, succeedAt: 1}
			b := &fakeDelivery{id: "B", policy: oneSecondThrice, succeedAt: 1}
			env, db := newFanOutEnv(t, a)
			db.during = func(d *fakeDelivery, _ int32) {
				if d.id != "A" {
					return
				}
				db.during = nil
				if tt.replayed {
					db.replay(b)
				}
				env.SignalWorkflow(wire.SignalReplay, nil)
			}
			env.ExecuteWorkflow(WebhookDelivery, input())
			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			checkRunError(t, env.GetWorkflowError(), false)
			if want := map[bool]int{true: 1, false: 0}[tt.replayed]; len(b.times) != want {
				t.Errorf("B sent %d times, want %d", len(b.times), want)
			}
			if db.asks != tt.asks {
				t.Errorf("PendingDeliveries asked %d times, want %d", db.asks, tt.asks)
			}
		})
	}
}

// An attempt that ends its series at once fails without retry, and the workflow marks
// the delivery failed with its reason: due while the endpoint is disabled,
// endpoint_disabled; a 410 Gone, gone, so that the endpoint is disabled (gone) and no
// delivery-exhausted is announced even when the attempt's own record was lost.
func TestFanOutEndsAtOnce(t *testing.T) {
	for _, c := range []struct {
		name   string
		d      *fakeDelivery
		reason string
	}{
		{"endpoint disabled", &fakeDelivery{id: "A", policy: models.DefaultRetryPolicy, disabled: true}, models.DeliveryEndpointDisabled},
		{"gone", &fakeDelivery{id: "A", policy: models.DefaultRetryPolicy, gone: true}, models.DeliveryGone},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := c.d
			env, _ := newFanOutEnv(t, d)
			env.ExecuteWorkflow(WebhookDelivery, input())
			checkRunError(t, env.GetWorkflowError(), true)
			if len(d.times) != 1 || len(d.marks) != 1 || d.marks[0].Reason != c.reason {
				t.Fatalf("attempts %d, marks %+v; want 1 attempt and one mark with %s", len(d.times), d.marks, c.reason)
			}
		})
	}
}

// retryPolicyOf: a delivery's copy, except that the default policy retries at the
// configured interval of the default policy.
func TestRetryPolicyOf(t *testing.T) {
	tests := []struct {
		name     string
		policy   models.RetryPolicy
		interval time.Duration
		want     temporal.RetryPolicy
	}{
		{"default policy, default interval", models.DefaultRetryPolicy, 0,
			temporal.RetryPolicy{InitialInterval: time.Hour, BackoffCoefficient: 1, MaximumInterval: time.Hour, MaximumAttempts: 6}},
		{"default policy, configured interval", models.DefaultRetryPolicy, 2 * time.Second,
			temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 1, MaximumInterval: 2 * time.Second, MaximumAttempts: 6}},
		{"own policy keeps its figures", doubling, 2 * time.Second,
			temporal.RetryPolicy{InitialInterval: 10 * time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 4}},
		{"no policy: the default, never unbounded", models.RetryPolicy{}, 0,
			temporal.RetryPolicy{InitialInterval: time.Hour, BackoffCoefficient: 1, MaximumInterval: time.Hour, MaximumAttempts: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := retryPolicyOf(tt.policy, tt.interval)
			if got.InitialInterval != tt.want.InitialInterval || got.BackoffCoefficient != tt.want.BackoffCoefficient ||
				got.MaximumInterval != tt.want.MaximumInterval || got.MaximumAttempts != tt.want.MaximumAttempts {
				t.Errorf("retryPolicyOf = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A run of an earlier release (single-endpoint path) that gets a replay signal after the
// deploy delivers the replayed delivery before it closes, instead of losing the signal.
func TestSingleDeliveryRunTakesAReplaySignal(t *testing.T) {
	other := &fakeDelivery{id: "B", policy: models.DefaultRetryPolicy, succeedAt: 1}
	env, db := newFanOutEnv(t)
	env.OnGetVersion(changeFanOut, workflow.DefaultVersion, fanOutOneMarker).Return(workflow.DefaultVersion)
	old := 0
	db.single = func() (activities.DeliverResult, error) {
		old++
		db.replay(other)
		env.SignalWorkflow(wire.SignalReplay, nil)
		return activities.DeliverResult{}, nil
	}
	env.ExecuteWorkflow(WebhookDelivery, input())
	checkRunError(t, env.GetWorkflowError(), false)
	if old != 1 || len(other.times) != 1 || other.triggers[0] != models.TriggerManual || db.asks != 1 {
		t.Fatalf("old attempt %d, replayed delivery sent %d times (%v), asks %d; want 1, 1 manual, 1", old, len(other.times), other.triggers, db.asks)
	}
}

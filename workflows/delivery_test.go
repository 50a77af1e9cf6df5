package workflows

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// attemptLog records, in workflow time, when each mocked activity ran.
type attemptLog struct {
	env      *testsuite.TestWorkflowEnvironment
	times    []time.Time // DeliverWebhook
	marks    []time.Time // MarkDeliveryFailed
	records  []activities.RecordDeliveredInput
	markFail int // MarkDeliveryFailed fails this many times first
}

// newEnv runs the single-endpoint code path, which runs started by the releases before
// the fan-out keep (change changeFanOut); fanout_test.go tests the fan-out.
func newEnv() (*testsuite.TestWorkflowEnvironment, *attemptLog) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	Register(env, &activities.Delivery{})
	env.OnGetVersion(changeFanOut, workflow.DefaultVersion, fanOutOneMarker).Return(workflow.DefaultVersion)
	log := &attemptLog{env: env}
	var a *activities.Delivery
	env.OnActivity(a.MarkDeliveryFailed, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.MarkFailedInput) error {
		log.marks = append(log.marks, env.Now())
		if in.EventID != input().EventID {
			return temporal.NewNonRetryableApplicationError("wrong event", "test", nil)
		}
		if len(log.marks) <= log.markFail {
			return errors.New("database unreachable")
		}
		return nil
	}).Maybe()
	env.OnActivity(a.RecordDelivered, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.RecordDeliveredInput) error {
		log.records = append(log.records, in)
		if len(log.records) < 3 {
			return errors.New("database unreachable")
		}
		return nil
	}).Maybe()
	return env, log
}

// deliver is the mocked delivery activity: it fails until attempt succeedAt (0: never).
func (l *attemptLog) deliver(succeedAt int) func(context.Context, activities.DeliverInput) (activities.DeliverResult, error) {
	return func(ctx context.Context, in activities.DeliverInput) (activities.DeliverResult, error) {
		l.times = append(l.times, l.env.Now())
		if in.MaxAttempts != wire.MaxAttempts {
			return activities.DeliverResult{}, temporal.NewNonRetryableApplicationError("wrong wire.MaxAttempts in input", "test", nil)
		}
		if succeedAt > 0 && int(activity.GetInfo(ctx).Attempt) >= succeedAt {
			return activities.DeliverResult{}, nil
		}
		return activities.DeliverResult{}, temporal.NewApplicationError("ack sentence missing", activities.ErrTypeDeliveryFailed)
	}
}

func input() wire.DeliveryInput {
	return wire.DeliveryInput{EventID: "ev-1", Type: "deal-signed", ObjectID: "deal-1", Environment: "sandbox", OrganizationID: "org-1", Trigger: "scheduled"}
}

// How a delivery runs (CONTRACT §8/§10): attempts an interval apart, at most six, and a
// delivery that ends failed is marked failed by the workflow and fails the run.
func TestDeliveryAttempts(t *testing.T) {
	permanent := func(l *attemptLog) func(context.Context, activities.DeliverInput) (activities.DeliverResult, error) {
		return func(context.Context, activities.DeliverInput) (activities.DeliverResult, error) {
			l.times = append(l.times, l.env.Now())
			return activities.DeliverResult{}, temporal.NewNonRetryableApplicationError("payload_too_large_for_get", "payload_too_large_for_get", nil)
		}
	}
	tests := []struct {
		name     string
		interval time.Duration // in the input; 0: the default hour
		deliver  func(l *attemptLog) func(context.Context, activities.DeliverInput) (activities.DeliverResult, error)
		attempts int
		gap      time.Duration // between consecutive attempts
		err      string        // the run's error: the activity's last failure
	}{
		{"never acknowledged: six attempts an hour apart", 0, func(l *attemptLog) func(context.Context, activities.DeliverInput) (activities.DeliverResult, error) {
			return l.deliver(0)
		}, wire.MaxAttempts, time.Hour, "ack sentence missing"},
		{"stops after the first success", 0, func(l *attemptLog) func(context.Context, activities.DeliverInput) (activities.DeliverResult, error) {
			return l.deliver(3)
		}, 3, time.Hour, ""},
		{"retry interval from the input", time.Second, func(l *attemptLog) func(context.Context, activities.DeliverInput) (activities.DeliverResult, error) {
			return l.deliver(0)
		}, wire.MaxAttempts, time.Second, "ack sentence missing"},
		{"permanent failure is not retried", 0, permanent, 1, 0, "payload_too_large_for_get"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, log := newEnv()
			var a *activities.Delivery
			env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(tt.deliver(log))
			in := input()
			in.RetryInterval = tt.interval
			start := env.Now()
			env.ExecuteWorkflow(WebhookDelivery, in)

			if !env.IsWorkflowCompleted() {
				t.Fatal("workflow did not complete")
			}
			err := env.GetWorkflowError()
			var appErr *temporal.ApplicationError
			if tt.err == "" && err != nil || tt.err != "" && (!errors.As(err, &appErr) || appErr.Message() != tt.err) {
				t.Fatalf("workflow error = %v, want %q", err, tt.err)
			}
			if len(log.times) != tt.attempts {
				t.Fatalf("attempts = %d, want %d", len(log.times), tt.attempts)
			}
			if d := log.times[0].Sub(start); d != 0 {
				t.Errorf("first attempt after %v, want at once", d)
			}
			for i := 1; i < len(log.times); i++ {
				if gap := log.times[i].Sub(log.times[i-1]); gap != tt.gap {
					t.Errorf("gap between attempts %d and %d = %v, want %v", i, i+1, gap, tt.gap)
				}
			}
			wantMarks := 0
			if tt.err != "" {
				wantMarks = 1
			}
			if len(log.marks) != wantMarks || len(log.records) != 0 {
				t.Errorf("marked failed %d times, recorded %d, want %d and 0", len(log.marks), len(log.records), wantMarks)
			}
		})
	}
}

// The last attempt's own record may fail: the workflow's MarkDeliveryFailed is retried
// (1 s, doubling) until the database answers, and the run still fails with the
// delivery's error, not the bookkeeping's.
func TestMarkFailedRetriedUntilTheDatabaseAnswers(t *testing.T) {
	env, log := newEnv()
	log.markFail = 4
	var a *activities.Delivery
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(log.deliver(0))
	in := input()
	in.RetryInterval = time.Second
	env.ExecuteWorkflow(WebhookDelivery, in)

	var appErr *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &appErr) || appErr.Message() != "ack sentence missing" {
		t.Fatalf("workflow error = %v, want the delivery's", err)
	}
	if len(log.marks) != 5 {
		t.Fatalf("MarkDeliveryFailed ran %d times, want 5 (four failures, then success)", len(log.marks))
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		if gap := log.marks[i+1].Sub(log.marks[i]); gap != want {
			t.Errorf("retry %d of the mark after %v, want %v", i+1, gap, want)
		}
	}
}

// A successful attempt whose record failed is recorded by the workflow, under its own
// retries; the event is never sent again for it.
func TestUnrecordedSuccessIsRecordedNotResent(t *testing.T) {
	env, log := newEnv()
	att := activities.UnrecordedAttempt{ID: "att-1", Number: 2, Trigger: "scheduled", Method: "POST", StatusCode: 200, DurationMS: 12}
	var a *activities.Delivery
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(func(context.Context, activities.DeliverInput) (activities.DeliverResult, error) {
		log.times = append(log.times, env.Now())
		return activities.DeliverResult{Unrecorded: &att}, nil
	})
	env.ExecuteWorkflow(WebhookDelivery, input())
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error = %v", err)
	}
	if len(log.times) != 1 {
		t.Fatalf("DeliverWebhook ran %d times, want 1", len(log.times))
	}
	if len(log.records) != 3 || log.records[2].EventID != "ev-1" || log.records[2].Attempt != att || len(log.marks) != 0 {
		t.Fatalf("RecordDelivered got %+v (marks %d), want the attempt, third try succeeding, no mark", log.records, len(log.marks))
	}
}

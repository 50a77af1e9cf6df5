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

	"github.com/revops/revops/activities"
)

// attemptLog records, in workflow time, when the mocked activity ran.
type attemptLog struct {
	env   *testsuite.TestWorkflowEnvironment
	times []time.Time
}

func newEnv() (*testsuite.TestWorkflowEnvironment, *attemptLog) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	Register(env, &activities.Activities{})
	return env, &attemptLog{env: env}
}

// deliver is the mocked activity: it fails until attempt succeedAt (0: never).
func (l *attemptLog) deliver(succeedAt int) func(context.Context, activities.DeliverInput) error {
	return func(ctx context.Context, in activities.DeliverInput) error {
		l.times = append(l.times, l.env.Now())
		if in.MaxAttempts != MaxAttempts {
			return temporal.NewNonRetryableApplicationError("wrong MaxAttempts in input", "test", nil)
		}
		if succeedAt > 0 && int(activity.GetInfo(ctx).Attempt) >= succeedAt {
			return nil
		}
		return temporal.NewApplicationError("ack sentence missing", activities.ErrTypeDeliveryFailed)
	}
}

func input() DeliveryInput {
	return DeliveryInput{EventID: "ev-1", Type: "deal-signed", ObjectID: "deal-1", Environment: "sandbox", OrganizationID: "org-1", Trigger: "scheduled"}
}

func TestNeverAcknowledgedMakesSixAttemptsAnHourApartThenFails(t *testing.T) {
	env, log := newEnv()
	var a *activities.Activities
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(log.deliver(0))
	start := env.Now()
	env.ExecuteWorkflow(WebhookDelivery, input())

	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	err := env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	if err == nil || !errors.As(err, &appErr) || appErr.Message() != "ack sentence missing" {
		t.Fatalf("workflow error = %v, want the activity's last failure", err)
	}
	if len(log.times) != MaxAttempts {
		t.Fatalf("attempts = %d, want %d", len(log.times), MaxAttempts)
	}
	if d := log.times[0].Sub(start); d != 0 {
		t.Errorf("first attempt after %v, want at once", d)
	}
	for i := 1; i < len(log.times); i++ {
		if gap := log.times[i].Sub(log.times[i-1]); gap != time.Hour {
			t.Errorf("gap between attempts %d and %d = %v, want 1h", i, i+1, gap)
		}
	}
}

func TestStopsAfterFirstSuccess(t *testing.T) {
	env, log := newEnv()
	var a *activities.Activities
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(log.deliver(3))
	env.ExecuteWorkflow(WebhookDelivery, input())
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error = %v", err)
	}
	if len(log.times) != 3 {
		t.Fatalf("attempts = %d, want 3 (two failures, then success)", len(log.times))
	}
	if gap := log.times[2].Sub(log.times[0]); gap != 2*time.Hour {
		t.Errorf("success came %v after the first attempt, want 2h", gap)
	}
}

func TestRetryIntervalFromInput(t *testing.T) {
	env, log := newEnv()
	var a *activities.Activities
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(log.deliver(0))
	in := input()
	in.RetryInterval = time.Second
	env.ExecuteWorkflow(WebhookDelivery, in)
	if env.GetWorkflowError() == nil {
		t.Fatal("workflow succeeded, want failure")
	}
	if len(log.times) != MaxAttempts {
		t.Fatalf("attempts = %d, want %d", len(log.times), MaxAttempts)
	}
	if total := log.times[MaxAttempts-1].Sub(log.times[0]); total != 5*time.Second {
		t.Errorf("attempts spread over %v, want 5s", total)
	}
}

func TestPermanentFailureIsNotRetried(t *testing.T) {
	env, log := newEnv()
	var a *activities.Activities
	env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(func(ctx context.Context, _ activities.DeliverInput) error {
		log.times = append(log.times, env.Now())
		return temporal.NewNonRetryableApplicationError("payload_too_large_for_get", "payload_too_large_for_get", nil)
	})
	env.ExecuteWorkflow(WebhookDelivery, input())
	if env.GetWorkflowError() == nil || len(log.times) != 1 {
		t.Fatalf("error %v after %d attempts, want an error after 1", env.GetWorkflowError(), len(log.times))
	}
}

package workflows

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// Every attempt carries its environment's fairness key, whatever the run was started
// with (a run of an earlier release has none), and the bookkeeping that settles a
// failed delivery runs on revops-system (CONTRACT §17): on the fan-out and on the
// single-endpoint path alike.
func TestAttemptsFairByEnvironmentBookkeepingOnSystem(t *testing.T) {
	want := wire.DeliveryPriority("org-1", "sandbox")
	if want.FairnessKey != "org-1/sandbox" || want.FairnessWeight != wire.FairnessWeight {
		t.Fatalf("wire.DeliveryPriority = %+v", want)
	}
	for _, path := range []struct {
		name string
		env  func() *testsuite.TestWorkflowEnvironment
		in   wire.DeliveryInput
	}{
		{"fan-out", func() *testsuite.TestWorkflowEnvironment {
			env, _ := newFanOutEnv(t, &fakeDelivery{id: "A", policy: oneSecondThrice})
			return env
		}, inputWith(&fakeDelivery{id: "A", policy: oneSecondThrice})},
		{"fan-out, deliveries asked", func() *testsuite.TestWorkflowEnvironment {
			env, _ := newFanOutEnv(t, &fakeDelivery{id: "A", policy: oneSecondThrice})
			return env
		}, input()},
		{"single endpoint", func() *testsuite.TestWorkflowEnvironment {
			env, log := newEnv()
			var a *activities.Delivery
			env.OnActivity(a.DeliverWebhook, mock.Anything, mock.Anything).Return(log.deliver(0))
			return env
		}, input()},
	} {
		t.Run(path.name, func(t *testing.T) {
			env := path.env()
			seen := runSeen(env, WebhookDelivery, path.in)
			if !env.IsWorkflowCompleted() || env.GetWorkflowError() == nil {
				t.Fatalf("run did not fail: %v", env.GetWorkflowError())
			}
			if p := seen.opts["DeliverWebhook"].Priority; p != want {
				t.Errorf("DeliverWebhook priority %+v, want %+v", p, want)
			}
			if o, asked := seen.opts["PendingDeliveries"]; asked && o.Priority != want {
				t.Errorf("PendingDeliveries priority %+v, want %+v", o.Priority, want)
			}
			if q := seen.opts["MarkDeliveryFailed"].TaskQueue; q != wire.SystemTaskQueue {
				t.Errorf("MarkDeliveryFailed on %q, want %s", q, wire.SystemTaskQueue)
			}
		})
	}
}

// scheduled keeps the options each activity type was last scheduled with (the test
// environment does not pass priorities on to the activity's info).
type scheduled struct {
	interceptor.WorkerInterceptorBase
	mu   sync.Mutex
	opts map[string]workflow.ActivityOptions
}

func (s *scheduled) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &scheduledIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, s: s}
}

type scheduledIn struct {
	interceptor.WorkflowInboundInterceptorBase
	s *scheduled
}

func (i *scheduledIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&scheduledOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, s: i.s})
}

type scheduledOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	s *scheduled
}

func (o *scheduledOut) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.s.mu.Lock()
	o.s.opts[activityType] = workflow.GetActivityOptions(ctx)
	o.s.mu.Unlock()
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

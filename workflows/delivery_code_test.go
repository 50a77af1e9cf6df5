package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// versionCalls counts what would add a MarkerRecorded or an UpsertWorkflowSearchAttributes
// event to a run's history: each change asked by workflow.GetVersion (its first call
// records a marker and upserts TemporalChangeVersion), and the run's own upserts.
type versionCalls struct {
	interceptor.WorkerInterceptorBase
	changes []string
	upserts int
}

func (v *versionCalls) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &versionInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, calls: v}
}

type versionInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	calls *versionCalls
}

func (i *versionInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&versionOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, calls: i.calls})
}

type versionOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	calls *versionCalls
}

func (o *versionOutbound) GetVersion(ctx workflow.Context, changeID string, minSupported, maxSupported workflow.Version) workflow.Version {
	o.calls.changes = append(o.calls.changes, changeID)
	return o.Next.GetVersion(ctx, changeID, minSupported, maxSupported)
}

func (o *versionOutbound) UpsertSearchAttributes(ctx workflow.Context, attributes map[string]interface{}) error {
	o.calls.upserts++
	return o.Next.UpsertSearchAttributes(ctx, attributes)
}

func (o *versionOutbound) UpsertTypedSearchAttributes(ctx workflow.Context, updates ...temporal.SearchAttributeUpdate) error {
	o.calls.upserts++
	return o.Next.UpsertTypedSearchAttributes(ctx, updates...)
}

// A run the starter started with CodeFanOut asks no change version (CONTRACT §22): no
// marker and no TemporalChangeVersion upsert (a visibility write on the server) on its
// way, whether its deliveries succeed or fail, and it runs the fan-out from its input.
// A run of an earlier release's input (no code) still asks changeFanOut.
func TestNewRunAsksNoChangeVersion(t *testing.T) {
	tests := []struct {
		name       string
		code       int
		deliveries []*fakeDelivery
		changes    int // GetVersion calls
		failed     bool
	}{
		{"new run, delivered at its first attempt", wire.CodeFanOut, []*fakeDelivery{{id: "A", policy: models.DefaultRetryPolicy, succeedAt: 1}}, 0, false},
		{"new run, one delivery failed after its attempts", wire.CodeFanOut, []*fakeDelivery{
			{id: "A", policy: oneSecondThrice, succeedAt: 1}, {id: "B", policy: oneSecondThrice},
		}, 0, true},
		{"earlier release's input, delivered", 0, []*fakeDelivery{{id: "A", policy: models.DefaultRetryPolicy, succeedAt: 1}}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, db := newFanOutEnv(t, tt.deliveries...)
			calls := &versionCalls{}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{calls}})
			in := input()
			in.Code = tt.code
			for _, d := range tt.deliveries {
				in.Deliveries = append(in.Deliveries, d.delivery())
			}
			env.ExecuteWorkflow(WebhookDelivery, in)

			if !env.IsWorkflowCompleted() || (env.GetWorkflowError() != nil) != tt.failed {
				t.Fatalf("completed %v, error %v; want failed %v", env.IsWorkflowCompleted(), env.GetWorkflowError(), tt.failed)
			}
			if len(calls.changes) != tt.changes || calls.upserts != 0 {
				t.Errorf("change versions asked %v, upserts %d; want %d asked, no upsert", calls.changes, calls.upserts, tt.changes)
			}
			if db.asks != 0 {
				t.Errorf("PendingDeliveries asked %d times: the run should start the deliveries of its input", db.asks)
			}
			for _, d := range tt.deliveries {
				if len(d.times) == 0 {
					t.Errorf("delivery %s never attempted", d.id)
				}
			}
		})
	}
}

// Rolling deploys: a worker of an earlier release that takes the first task of a run
// started with CodeFanOut ignores the code and records changeFanOut's marker and its
// upsert. Every later worker replays that run: the v7 histories of the fan-out, given a
// CodeFanOut input, stand for it.
func TestRunWithCodeStartedByAnEarlierWorkerReplays(t *testing.T) {
	for _, scenario := range []string{"delivered_first_attempt", "failed_all_attempts", "two_endpoints_one_failing", "replayed_while_settling"} {
		t.Run(scenario, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "histories", "v7", scenario+".json"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			started := h.Events[0].GetWorkflowExecutionStartedEventAttributes()
			payload := started.GetInput().GetPayloads()[0]
			var in map[string]any
			if err := json.Unmarshal(payload.Data, &in); err != nil {
				t.Fatal(err)
			}
			in["Code"] = wire.CodeFanOut
			if payload.Data, err = json.Marshal(in); err != nil {
				t.Fatal(err)
			}
			replayer := worker.NewWorkflowReplayer()
			RegisterWorkflows(replayer)
			if err := replayer.ReplayWorkflowHistory(nil, h); err != nil {
				t.Fatalf("replay: %v", err)
			}
		})
	}
}

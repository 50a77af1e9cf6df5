package temporalsetup

import (
	"context"
	"fmt"
	"maps"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// PacedQueue is an activity task queue whose fairness keys Temporal rate-limits (1.32):
// each key at the queue's default per-key rate times the key's weight, and a key's
// weight override, set on the queue, wins over the weight its tasks carry. Revops paces
// webhook endpoints with it (CONTRACT §27): the key is the endpoint, its override its
// rate.
type PacedQueue struct {
	Client    client.Client
	Namespace string
	Queue     string
}

// Weight is a rate per second as a fairness weight, within the bounds Temporal keeps
// weights to (0.001 to 1,000).
func Weight(rate float64) float32 {
	return float32(min(max(rate, 0.001), 1000))
}

// MaxOverridesPerUpdate bounds the keys one UpdateTaskQueueConfig sets or unsets: a
// reconcile of thousands of endpoints goes in several requests (the server refuses more
// than matching.maxFairnessKeyWeightOverrides in one).
const MaxOverridesPerUpdate = 500

// Config is the queue's per-key default rate (nil: none, so keys are not limited) and
// its weight overrides, as the engine has them.
func (q PacedQueue) Config(ctx context.Context) (defaultRate *float32, overrides map[string]float32, err error) {
	resp, err := q.Client.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
		Namespace:     q.Namespace,
		TaskQueue:     &taskqueuepb.TaskQueue{Name: q.Queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
		ReportConfig:  true,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("describe task queue %s: %w", q.Queue, err)
	}
	cfg := resp.GetConfig()
	if rl := cfg.GetFairnessKeysRateLimitDefault().GetRateLimit(); rl != nil {
		r := rl.GetRequestsPerSecond()
		defaultRate = &r
	}
	overrides = cfg.GetFairnessWeightOverrides()
	if overrides == nil {
		overrides = map[string]float32{}
	}
	return defaultRate, overrides, nil
}

// EnsureDefaultRate sets the queue's per-key default rate to rate unless it is already;
// it tells whether it changed it.
func (q PacedQueue) EnsureDefaultRate(ctx context.Context, rate float32) (bool, error) {
	have, _, err := q.Config(ctx)
	if err != nil {
		return false, err
	}
	if have != nil && *have == rate {
		return false, nil
	}
	_, err = q.Client.WorkflowService().UpdateTaskQueueConfig(ctx, &workflowservice.UpdateTaskQueueConfigRequest{
		Namespace:     q.Namespace,
		Identity:      "revops",
		TaskQueue:     q.Queue,
		TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
		UpdateFairnessKeyRateLimitDefault: &workflowservice.UpdateTaskQueueConfigRequest_RateLimitUpdate{
			RateLimit: &taskqueuepb.RateLimit{RequestsPerSecond: rate},
			Reason:    "Revops paced endpoints (CONTRACT §27): a key's rate is this times its weight",
		},
	})
	if err != nil {
		return false, fmt.Errorf("set the per-key rate of task queue %s: %w", q.Queue, err)
	}
	return true, nil
}

// SetWeights sets the weight overrides of set and removes those of unset, at most
// MaxOverridesPerUpdate keys a request (a key in both is set).
func (q PacedQueue) SetWeights(ctx context.Context, set map[string]float32, unset []string) error {
	keys := slices.Sorted(maps.Keys(set))
	unset = slices.DeleteFunc(slices.Clone(unset), func(k string) bool { _, ok := set[k]; return ok })
	for len(keys) > 0 || len(unset) > 0 {
		req := &workflowservice.UpdateTaskQueueConfigRequest{
			Namespace: q.Namespace, Identity: "revops", TaskQueue: q.Queue,
			TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY,
		}
		n := min(len(keys), MaxOverridesPerUpdate)
		if n > 0 {
			req.SetFairnessWeightOverrides = make(map[string]float32, n)
			for _, k := range keys[:n] {
				req.SetFairnessWeightOverrides[k] = set[k]
			}
			keys = keys[n:]
		}
		if m := min(len(unset), MaxOverridesPerUpdate-n); m > 0 {
			req.UnsetFairnessWeightOverrides, unset = unset[:m], unset[m:]
		}
		if _, err := q.Client.WorkflowService().UpdateTaskQueueConfig(ctx, req); err != nil {
			return fmt.Errorf("set fairness weight overrides of task queue %s: %w", q.Queue, err)
		}
	}
	return nil
}

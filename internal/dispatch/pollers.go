package dispatch

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/workflows/wire"
)

// Pollers lists the identities of the workers Temporal saw poll the deployment's task
// queues (workflow and activity tasks) within the last Within (default 2 minutes): the
// rolling-upgrade gate of CONTRACT §26 (webhook.CheckOrdering) reads each one's release
// from it.
type Pollers struct {
	Client client.Client
	Within time.Duration
}

// WorkerIdentities implements webhook.WorkerIdentities.
func (p Pollers) WorkerIdentities(ctx context.Context) ([]string, error) {
	within := p.Within
	if within <= 0 {
		within = 2 * time.Minute
	}
	since := time.Now().Add(-within)
	seen := map[string]bool{}
	var out []string
	for _, q := range []string{wire.TaskQueue, wire.JobsTaskQueue, wire.SystemTaskQueue} {
		for _, kind := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
			resp, err := p.Client.DescribeTaskQueue(ctx, q, kind)
			if err != nil {
				return nil, fmt.Errorf("describe task queue %s: %w", q, err)
			}
			for _, poller := range resp.GetPollers() {
				id := poller.GetIdentity()
				if seen[id] || poller.GetLastAccessTime().AsTime().Before(since) {
					continue
				}
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, nil
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// TestMinuteCheckReconcilesPaces (CONTRACT §27): with no push after the commits (the
// store hands nothing over here), the minute check's reconcile brings the paced queue to
// the database: the per-key rate set, overrides added for paced endpoints, changed when
// a rate changed, removed for an endpoint unpaced and for one deleted (and for a key no
// endpoint has); a pass with nothing to do changes nothing.
func TestMinuteCheckReconcilesPaces(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	q := temporalsetup.PacedQueue{Client: s.ts.GetDefaultClient(), Namespace: s.ts.GetDefaultNamespace(), Queue: wire.PacedTaskQueue}
	p := &activities.Pacing{Store: s.db.Store, Queue: q, KeyRate: wire.PacedKeyRate}
	e := &webhook.Endpoints{Store: s.db.Store, AllowPrivate: true}

	create := func(limit int, period string) string {
		t.Helper()
		ep, err := webhook.CreateEndpoint(ctx, s.db.Store, s.db.Env, models.WebhookEndpoint{URL: s.rc.URL + "/paced", Method: "POST",
			Enabled: true, Secret: s.secret, RateLimit: limit, RatePeriod: period}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			t.Fatal(err)
		}
		return ep.ID
	}
	a, b, c := create(5, models.RatePerSecond), create(30, models.RatePerMinute), create(2, models.RatePerSecond)
	// A stale override of an endpoint that no longer exists, as a push lost with a
	// deletion would leave.
	if err := q.SetWeights(ctx, map[string]float32{"gone-endpoint": 3}, nil); err != nil {
		t.Fatal(err)
	}
	waitOverrides(t, q, map[string]float32{"gone-endpoint": 3}, false)
	res, err := p.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float32{a: 5, b: 0.5, c: 2}
	waitOverrides(t, q, want, true)
	if res.Endpoints != 3 || res.Set != 3 || res.Unset != 1 {
		t.Errorf("first pass: %+v", res)
	}

	if _, err := e.Update(ctx, s.db.Env, a, webhook.EndpointFields{RateLimit: rateLimitJSON(`{"limit":12,"period":"1s"}`)}, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Update(ctx, s.db.Env, b, webhook.EndpointFields{RateLimit: rateLimitJSON(`null`)}, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.DeleteEndpoint(ctx, s.db.Store, s.db.Env, c, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
		t.Fatal(err)
	}
	if res, err = p.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	waitOverrides(t, q, map[string]float32{a: 12}, true)
	if res.Set != 1 || res.Unset != 2 {
		t.Errorf("second pass: %+v", res)
	}
	if res, err = p.Reconcile(ctx); err != nil || res.Set != 0 || res.Unset != 0 {
		t.Errorf("a pass with nothing to do: %+v %v", res, err)
	}
}

func rateLimitJSON(s string) *json.RawMessage {
	raw := json.RawMessage(s)
	return &raw
}

// waitOverrides waits until the queue's overrides, read back from Temporal, are want
// (and, after a pass, its per-key rate 1/s): DescribeTaskQueue shows an update shortly
// after it, and each pass starts from what it reads, so the test waits before the next.
func waitOverrides(t *testing.T, q temporalsetup.PacedQueue, want map[string]float32, afterPass bool) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("overrides %v", want), func() bool {
		def, got, err := q.Config(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return maps.Equal(got, want) && (!afterPass || def != nil && *def == wire.PacedKeyRate)
	})
}

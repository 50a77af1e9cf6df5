package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/revops/revops/internal/domain/webhook"
)

// Health holds the endpoint health check's dependencies (CONTRACT §23).
type Health struct {
	Store interface {
		webhook.HealthCheckStore
		webhook.LaneCheckStore
	}
	// FailingAfter is REVOPS_WEBHOOK_FAILING_AFTER (0: webhook.DefaultFailingAfter).
	FailingAfter time.Duration
	// OrderMaxWait is REVOPS_WEBHOOK_ORDER_MAX_WAIT (0: webhook.DefaultOrderMaxWait).
	OrderMaxWait time.Duration
	// Pacing reconciles the paced endpoints' weight overrides at each pass (CONTRACT
	// §27); nil: not on this worker (tests).
	Pacing *Pacing
}

// HealthCheckPass bounds one pass.
type HealthCheckPass struct{ Limit int }

// HealthCheckResult counts what a pass did.
type HealthCheckResult struct {
	Endpoints int
	Purged    int64
}

// CheckHealth runs one bounded pass of the health check (webhook.CheckHealth).
func (h *Health) CheckHealth(ctx context.Context, in HealthCheckPass) (HealthCheckResult, error) {
	failingAfter := h.FailingAfter
	if failingAfter <= 0 {
		failingAfter = webhook.DefaultFailingAfter
	}
	res, err := webhook.CheckHealth(ctx, h.Store, time.Now().UTC(), failingAfter, max(in.Limit, 1))
	if err != nil {
		return HealthCheckResult{}, fmt.Errorf("health check: %w", err)
	}
	if res.Endpoints > 0 || res.Purged > 0 {
		activity.GetLogger(ctx).Info("endpoint health checked", "endpoints", res.Endpoints, "purged", res.Purged)
	}
	// The order lanes' sweeps ride on the same pass (CONTRACT §26): no workflow change.
	maxWait := h.OrderMaxWait
	if maxWait <= 0 {
		maxWait = webhook.DefaultOrderMaxWait
	}
	lanes, err := webhook.CheckLanes(ctx, h.Store, time.Now().UTC(), maxWait, max(in.Limit, 1))
	if err != nil {
		return HealthCheckResult{}, fmt.Errorf("order lanes check: %w", err)
	}
	if lanes != (webhook.LanesChecked{}) {
		activity.GetLogger(ctx).Info("order lanes checked", "expired", lanes.Expired, "run_closed", lanes.Closed, "released", lanes.Released)
	}
	if h.Pacing != nil {
		// The minute check's second duty (CONTRACT §27), inside its pass so that the
		// workflow is unchanged; a failure is logged, never the health check's: the next
		// minute tries again.
		if _, err := h.Pacing.Reconcile(ctx); err != nil {
			activity.GetLogger(ctx).Warn("paced endpoints not reconciled with Temporal", "err", err)
		}
	}
	return HealthCheckResult{Endpoints: res.Endpoints, Purged: res.Purged}, nil
}

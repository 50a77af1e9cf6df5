package activities

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/store"
)

// Purge targets: what one PurgeBatch deletes (CONTRACT §16). Usage is never one of them.
const (
	PurgeEvents      = "events" // with their deliveries and attempts
	PurgeReplayJobs  = "replay_jobs"
	PurgeIdempotency = "idempotency_keys"
)

// RetentionStore is what the retention activities need of the store.
type RetentionStore interface {
	PurgeEvents(ctx context.Context, before time.Time, limit int) (store.Purged, error)
	PurgeReplayJobs(ctx context.Context, before time.Time, limit int) (store.Purged, error)
	PurgeIdempotencyKeys(ctx context.Context, before time.Time, limit int) (store.Purged, error)
}

var _ RetentionStore = (*store.Store)(nil)

// Retention holds the retention activities' dependencies.
type Retention struct {
	Store RetentionStore
}

// PurgeInput asks for one batch of rows older than Before to be deleted.
type PurgeInput struct {
	Target string
	Before time.Time
	Limit  int
}

// PurgeResult is how many rows the batch deleted per table, and how many rows of its
// target it took (fewer than the limit: nothing older is left).
type PurgeResult struct {
	Rows    int
	Deleted map[string]int64
}

// PurgeBatch deletes one batch, in its own short transaction, so no lock is held for
// longer than one batch takes; the workflow loops until a batch comes back short. A
// panic ends the batch alone (ErrTypePanic).
func (r *Retention) PurgeBatch(ctx context.Context, in PurgeInput) (PurgeResult, error) {
	return guardedPage(ctx, "retention_batch", func() (PurgeResult, error) { return r.purgeBatch(ctx, in) }, "target", in.Target)
}

func (r *Retention) purgeBatch(ctx context.Context, in PurgeInput) (PurgeResult, error) {
	if in.Limit <= 0 {
		return PurgeResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("purge limit %d", in.Limit), "BadPurgeInput", nil)
	}
	var (
		p   store.Purged
		err error
	)
	switch in.Target {
	case PurgeEvents:
		p, err = r.Store.PurgeEvents(ctx, in.Before, in.Limit)
	case PurgeReplayJobs:
		p, err = r.Store.PurgeReplayJobs(ctx, in.Before, in.Limit)
	case PurgeIdempotency:
		p, err = r.Store.PurgeIdempotencyKeys(ctx, in.Before, in.Limit)
	default:
		return PurgeResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown purge target %q", in.Target), "BadPurgeInput", nil)
	}
	if err != nil {
		return PurgeResult{}, fmt.Errorf("purge %s older than %s: %w", in.Target, in.Before.Format(time.RFC3339), err)
	}
	for table, n := range p.Deleted {
		metrics.RetentionRowsPurged(table, n)
	}
	return PurgeResult{Rows: p.Rows, Deleted: p.Deleted}, nil
}

package meterstest

import (
	"context"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/models"
)

// Ingest stores the usage batch body (a POST /v1/usage/events body) in env as received
// at `at`, outside any idempotent request: how the meters' tests and benchmarks feed
// their consumer. It returns the error, so that it may be called from any goroutine.
func Ingest(ctx context.Context, st usage.Store, env models.Env, body []byte, at time.Time) error {
	_, err := usage.Ingest(ctx, st, env, body, at, idempotency.Reply[usage.StoredReceipt]{})
	return err
}

// Create defines meter d in env at `at`, outside any idempotent request.
func Create(ctx context.Context, st meters.Store, env models.Env, d meters.Definition, at time.Time) (models.Meter, error) {
	return meters.Create(ctx, st, env, d, at, idempotency.Reply[meters.Object]{})
}

// Backfill runs meter id's backfill, page after page, until the meter is ready.
func Backfill(ctx context.Context, st meters.Store, id string, now time.Time) error {
	for {
		done, _, err := meters.BackfillPage(ctx, st, id, now)
		if err != nil || done {
			return err
		}
	}
}

// CreateReady defines meter d in env (Create) and backfills it until it is ready.
func CreateReady(ctx context.Context, st meters.Store, env models.Env, d meters.Definition) (models.Meter, error) {
	m, err := Create(ctx, st, env, d, time.Now())
	if err != nil {
		return m, err
	}
	return m, Backfill(ctx, st, m.ID, time.Now())
}

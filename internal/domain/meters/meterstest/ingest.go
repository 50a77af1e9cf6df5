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
func Create(ctx context.Context, svc *meters.Service, env models.Env, d meters.Definition, at time.Time) (models.Meter, error) {
	return svc.Create(ctx, env, d, at, idempotency.Reply[meters.Object]{})
}

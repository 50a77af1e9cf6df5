// Package replay delivers stored events again (CONTRACT §9, §13): one event (or one of
// its deliveries) at once, or every delivery matching a filter in a bulk replay job. A
// replay is decided here, in the database's transaction (Deliveries: which deliveries go
// back to pending, which are refused); once it commits, the store hands the event to the
// dispatcher (store.AfterCommit), which reaches its workflow off the request path (the
// sweeper does it later if that fails). A job is a row the API creates (CreateJob, under
// the environment's job limit) and a BulkReplay workflow runs page by page (Page, §16):
// this package records the job, which the store hands to the job starter once
// committed; it never runs one.
package replay

import (
	"context"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what replays need of the database.
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	ReplayJob(ctx context.Context, env models.Env, id string) (models.ReplayJob, error)
}

var _ Store = (*store.Store)(nil)

// Job loads a bulk replay job of the environment (ErrNotFound for another's).
func Job(ctx context.Context, st Store, env models.Env, id string) (models.ReplayJob, error) {
	return st.ReplayJob(ctx, env, id)
}

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
	"time"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Storer is what replays need of the database.
type Storer interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	ReplayJob(ctx context.Context, env models.Env, id string) (models.ReplayJob, error)
}

var _ Storer = (*store.Store)(nil)

// Service replays events.
type Service struct {
	Store Storer
}

// One replays one event of the environment — its delivery to endpointID, or all its
// deliveries when endpointID is "" — and returns it as stored afterwards (ErrNotFound
// for an id of another environment; a ConflictError delivery_in_progress while a chosen
// delivery is pending or retrying). It does not wait for Temporal. It keeps no answer:
// the dashboard's buttons take no Idempotency-Key.
func (s *Service) One(ctx context.Context, env models.Env, id, endpointID string) (models.Event, error) {
	r, err := s.OneWith(ctx, env, id, endpointID, events.Links{}, idempotency.Reply[events.Object]{})
	return r.Event, err
}

// OneWith is One for a request (POST /v1/events/{id}/replay): the event comes back with
// its attempts and deliveries, and reply's answer, the event's object with links, is
// kept in the replay's transaction (CONTRACT §14).
func (s *Service) OneWith(ctx context.Context, env models.Env, id, endpointID string, links events.Links, reply store.Keeper[events.Object]) (events.Event, error) {
	return Event(ctx, s.Store, env, id, endpointID, links, reply)
}

// Replay replays every delivery of one event (the dashboard's button).
func (s *Service) Replay(ctx context.Context, env models.Env, id string) error {
	_, err := s.One(ctx, env, id, "")
	return err
}

// ReplayFailed starts a job replaying every failed event of the environment (the
// dashboard's button, which takes no Idempotency-Key: its Reply keeps nothing) and says
// how many events it matched.
func (s *Service) ReplayFailed(ctx context.Context, env models.Env) (int, error) {
	j, err := s.StartJob(ctx, env, events.Filter{Status: models.EventFailed}, idempotency.Reply[JobObject]{})
	return j.Matched, err
}

// StartJob records a job for the deliveries matching f, with reply's answer; its
// BulkReplay workflow is started after commit, without waiting for Temporal.
func (s *Service) StartJob(ctx context.Context, env models.Env, f events.Filter, reply store.Keeper[JobObject]) (models.ReplayJob, error) {
	return CreateJob(ctx, s.Store, env, f, time.Now(), reply)
}

// Job loads a job of the environment.
func (s *Service) Job(ctx context.Context, env models.Env, id string) (models.ReplayJob, error) {
	return s.Store.ReplayJob(ctx, env, id)
}

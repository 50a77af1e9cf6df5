// Package replay delivers stored events again (CONTRACT §9, §13): one event (or one of
// its deliveries) at once, or every delivery matching a filter in a bulk replay job. A
// replay is decided here, in the database's transaction (Deliveries: which deliveries go
// back to pending, which are refused); the event is then handed to the dispatcher, which
// reaches its workflow off the request path (the sweeper does it later if that fails).
// A job is a row the API creates (CreateJob, under the environment's job limit) and a
// BulkReplay workflow runs page by page (Page, §16): this package records the job and
// asks the dispatcher for its workflow, it never runs one.
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

// Dispatcher reaches the workflows of replayed events without waiting for them
// (dispatch.Dispatcher).
type Dispatcher interface {
	Dispatch(ctx context.Context, events []models.Event)
}

// JobStarter starts a new job's BulkReplay workflow after its commit, detached from the
// request and without blocking it; a failure is left to the worker's sweeper
// (dispatch.ReplayJobs.StartDetached).
type JobStarter interface {
	StartDetached(ctx context.Context, j models.ReplayJob)
}

// Service replays events.
type Service struct {
	Store Storer
	// Dispatch reaches the workflow of replayed events without waiting for it (a
	// dispatch.Queue in front of dispatch.Starter); nil: the sweeper reaches them.
	Dispatch Dispatcher
	// Jobs starts a new job's workflow right after it is recorded, off the request path
	// (nil, or Temporal away: the worker's sweeper starts it).
	Jobs JobStarter
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
	r, err := Event(ctx, s.Store, env, id, endpointID, links, reply)
	if err != nil {
		return r, err
	}
	if s.Dispatch != nil && r.RedispatchAt != nil {
		s.Dispatch.Dispatch(ctx, []models.Event{r.Event})
	}
	return r, nil
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

// StartJob records a job for the deliveries matching f, with reply's answer, and asks
// for its BulkReplay workflow without waiting for Temporal.
func (s *Service) StartJob(ctx context.Context, env models.Env, f events.Filter, reply store.Keeper[JobObject]) (models.ReplayJob, error) {
	j, err := CreateJob(ctx, s.Store, env, f, time.Now(), reply)
	if err != nil {
		return j, err
	}
	if j.Status == models.ReplayJobRunning && s.Jobs != nil {
		s.Jobs.StartDetached(ctx, j)
	}
	return j, nil
}

// Job loads a job of the environment.
func (s *Service) Job(ctx context.Context, env models.Env, id string) (models.ReplayJob, error) {
	return s.Store.ReplayJob(ctx, env, id)
}

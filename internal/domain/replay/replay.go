// Package replay delivers stored events again (CONTRACT §9, §13): one event (or one of
// its deliveries) at once, or every delivery matching a filter in a bulk replay job. A
// replay is decided in the database (store.ReplayDeliveries); the event is then handed to
// the dispatcher, which reaches its workflow off the request path (the sweeper does it
// later if that fails). A job is a row the API creates and a BulkReplay workflow runs
// (§16): this package only records it and asks for its workflow, it never runs one.
package replay

import (
	"context"
	"log/slog"
	"time"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// JobStarter starts a job's BulkReplay workflow (dispatch.ReplayJobs.StartReplayJob).
type JobStarter interface {
	StartReplayJob(ctx context.Context, j models.ReplayJob) error
}

// Store is what replays need of the database.
type Store interface {
	ReplayEvent(ctx context.Context, env models.Env, eventID, endpointID string, reply store.Keeper[store.ReplayedEvent]) (store.ReplayedEvent, error)
	CreateReplayJob(ctx context.Context, env models.Env, f store.EventFilter, now time.Time, reply store.Keeper[models.ReplayJob]) (models.ReplayJob, error)
	ReplayJob(ctx context.Context, env models.Env, id string) (models.ReplayJob, error)
}

var _ Store = (*store.Store)(nil)

// startTimeout bounds the start of a job's workflow, done after the API has answered.
const startTimeout = 5 * time.Second

// Service replays events.
type Service struct {
	Store Store
	// Dispatch reaches the workflow of replayed events without waiting for it (a
	// dispatch.Queue in front of dispatch.Starter); nil: the sweeper reaches them.
	Dispatch dispatch.Dispatcher
	// Jobs starts a new job's workflow right after it is recorded, off the request path
	// (nil, or Temporal away: the worker's sweeper starts it).
	Jobs JobStarter
	Log  *slog.Logger
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// One replays one event of the environment — its delivery to endpointID, or all its
// deliveries when endpointID is "" — and returns it as stored afterwards (ErrNotFound
// for an id of another environment; a ConflictError delivery_in_progress while a chosen
// delivery is pending or retrying). It does not wait for Temporal. It keeps no answer:
// the dashboard's buttons take no Idempotency-Key.
func (s *Service) One(ctx context.Context, env models.Env, id, endpointID string) (models.Event, error) {
	r, err := s.OneWith(ctx, env, id, endpointID, idempotency.Reply[store.ReplayedEvent]{})
	return r.Event, err
}

// OneWith is One for a request (POST /v1/events/{id}/replay): the event comes back with
// its attempts and deliveries, and reply's answer is kept in the replay's transaction
// (CONTRACT §14).
func (s *Service) OneWith(ctx context.Context, env models.Env, id, endpointID string, reply idempotency.Reply[store.ReplayedEvent]) (store.ReplayedEvent, error) {
	r, err := s.Store.ReplayEvent(ctx, env, id, endpointID, reply)
	if err != nil {
		return r, err
	}
	s.dispatch(ctx, r.Event)
	return r, nil
}

func (s *Service) dispatch(ctx context.Context, e models.Event) {
	if s.Dispatch != nil && e.RedispatchAt != nil {
		s.Dispatch.Dispatch(ctx, []models.Event{e})
	}
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
	j, err := s.StartJob(ctx, env, store.EventFilter{Status: models.EventFailed}, idempotency.Reply[models.ReplayJob]{})
	return j.Matched, err
}

// StartJob records a job for the deliveries matching f, with reply's answer, and asks
// for its BulkReplay workflow without waiting for Temporal.
func (s *Service) StartJob(ctx context.Context, env models.Env, f store.EventFilter, reply idempotency.Reply[models.ReplayJob]) (models.ReplayJob, error) {
	j, err := s.Store.CreateReplayJob(ctx, env, f, time.Now(), reply)
	if err != nil {
		return j, err
	}
	if j.Status == models.ReplayJobRunning && s.Jobs != nil {
		go func() {
			// Detached from the request: the job outlives it.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
			defer cancel()
			if err := s.Jobs.StartReplayJob(sctx, j); err != nil {
				s.log().Warn("replay job's workflow not started; the sweeper will", "job_id", j.ID, "err", err)
			}
		}()
	}
	return j, nil
}

// Job loads a job of the environment.
func (s *Service) Job(ctx context.Context, env models.Env, id string) (models.ReplayJob, error) {
	return s.Store.ReplayJob(ctx, env, id)
}

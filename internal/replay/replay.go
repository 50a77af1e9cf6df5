// Package replay delivers stored events again (CONTRACT §9, §13): one event (or one of
// its deliveries) at once, or every event matching a filter in a background job whose
// progress is kept in the database, so that replaying thousands of events never holds a
// request open. A replay is decided in the database (store.ReplayDeliveries); the
// event is then handed to the dispatcher, which reaches its workflow off the request
// path (the sweeper does it later if that fails).
package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Dispatcher reaches the workflow of replayed events without waiting for it
// (api.DispatchQueue in front of dispatch.Starter).
type Dispatcher interface {
	Dispatch(ctx context.Context, events []models.Event)
}

// Store is what replays need of the database.
type Store interface {
	ReplayDeliveries(ctx context.Context, env store.Env, eventID, endpointID string) (models.Event, error)
	EventDeliveries(ctx context.Context, env store.Env, eventID string) ([]models.WebhookDelivery, error)
	CreateReplayJob(ctx context.Context, env store.Env, f store.EventFilter, now time.Time) (models.ReplayJob, error)
	ReplayJob(ctx context.Context, env store.Env, id string) (models.ReplayJob, error)
	EventsAfter(ctx context.Context, env store.Env, f store.EventFilter, cursorAt *time.Time, cursorID string, limit int) ([]models.Event, error)
	AdvanceReplayJob(ctx context.Context, env store.Env, id string, p store.ReplayProgress, now time.Time) error
	FinishReplayJob(ctx context.Context, env store.Env, id string, now time.Time) error
	ClaimStaleReplayJobs(ctx context.Context, staleBefore, now time.Time, limit int) ([]models.ReplayJob, error)
}

var _ Store = (*store.Store)(nil)

// Defaults of a Service.
const (
	DefaultBatch       = 100             // events per progress update
	DefaultConcurrency = 8               // replays started at once
	DefaultStaleAfter  = 2 * time.Minute // a running job without progress for this long is resumed
)

// Service replays events. Jobs run in goroutines of the process that created them; a
// job whose process died is resumed by RunResumer in any process, from its cursor.
type Service struct {
	Store       Store
	Dispatch    Dispatcher // nil: the sweeper reaches the workflows
	Log         *slog.Logger
	Batch       int
	Concurrency int
	StaleAfter  time.Duration

	wg sync.WaitGroup // running jobs, for Wait
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// One replays one event of the environment — its delivery to endpointID, or all its
// deliveries when endpointID is "" — and returns it as stored afterwards (ErrNotFound
// for an id of another environment; a ConflictError delivery_in_progress while a chosen
// delivery is pending or retrying). It does not wait for Temporal.
func (s *Service) One(ctx context.Context, env store.Env, id, endpointID string) (models.Event, error) {
	e, err := s.Store.ReplayDeliveries(ctx, env, id, endpointID)
	if err != nil {
		return e, err
	}
	s.dispatch(ctx, e)
	return e, nil
}

func (s *Service) dispatch(ctx context.Context, e models.Event) {
	if s.Dispatch != nil && e.RedispatchAt != nil {
		s.Dispatch.Dispatch(ctx, []models.Event{e})
	}
}

// Replay replays every delivery of one event (the dashboard's button).
func (s *Service) Replay(ctx context.Context, env store.Env, id string) error {
	_, err := s.One(ctx, env, id, "")
	return err
}

// ReplayFailed starts a job replaying every failed event of the environment (the
// dashboard's button) and says how many events it matched.
func (s *Service) ReplayFailed(ctx context.Context, env store.Env) (int, error) {
	j, err := s.StartJob(ctx, env, store.EventFilter{Status: models.EventFailed})
	return j.Matched, err
}

// StartJob records a job for the events matching f and runs it in the background.
func (s *Service) StartJob(ctx context.Context, env store.Env, f store.EventFilter) (models.ReplayJob, error) {
	j, err := s.Store.CreateReplayJob(ctx, env, f, time.Now())
	if err != nil {
		return j, err
	}
	if j.Status == models.ReplayJobRunning {
		s.spawn(j)
	}
	return j, nil
}

// Job loads a job of the environment.
func (s *Service) Job(ctx context.Context, env store.Env, id string) (models.ReplayJob, error) {
	return s.Store.ReplayJob(ctx, env, id)
}

// Wait blocks until the jobs this process runs have ended (tests, graceful stops).
func (s *Service) Wait() { s.wg.Wait() }

func (s *Service) spawn(j models.ReplayJob) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// Detached from the request that created the job: the job outlives it.
		if err := s.run(context.Background(), j); err != nil {
			s.log().Warn("replay job stopped; it resumes once stale", "job_id", j.ID, "err", err)
		}
	}()
}

// run replays the job's events batch by batch, oldest first, from its cursor.
func (s *Service) run(ctx context.Context, j models.ReplayJob) error {
	env, f := store.JobEnv(j), store.JobFilter(j)
	cursorAt, cursorID := j.CursorAt, j.CursorID
	for {
		events, err := s.Store.EventsAfter(ctx, env, f, cursorAt, cursorID, orInt(s.Batch, DefaultBatch))
		if err != nil {
			return err
		}
		if len(events) == 0 {
			return s.Store.FinishReplayJob(ctx, env, j.ID, time.Now().UTC())
		}
		p := s.replayBatch(ctx, env, f, events)
		if err := s.Store.AdvanceReplayJob(ctx, env, j.ID, p, time.Now().UTC()); err != nil {
			return err
		}
		cursorAt, cursorID = &p.CursorAt, p.CursorID
	}
}

// replayBatch replays the events, a few at once, and counts the outcomes. An event that
// cannot be replayed (a chosen delivery in progress, a database error) counts as failed.
func (s *Service) replayBatch(ctx context.Context, env store.Env, f store.EventFilter, events []models.Event) store.ReplayProgress {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		p   store.ReplayProgress
		sem = make(chan struct{}, orInt(s.Concurrency, DefaultConcurrency))
	)
	for _, e := range events {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := s.replayMatching(ctx, env, f, e)
			if err != nil && !isConflict(err) {
				s.log().Warn("replay of event failed", "event_id", e.ID, "err", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				p.Failed++
			} else {
				p.Replayed++
			}
		}()
	}
	wg.Wait()
	last := events[len(events)-1]
	p.CursorAt, p.CursorID = last.CreatedAt, last.ID
	return p
}

// replayMatching replays the deliveries of an event that the job's filter matches: with
// a status or endpoint in the filter only the deliveries that have them (`--failed`
// never re-sends a delivered one), otherwise all of them.
func (s *Service) replayMatching(ctx context.Context, env store.Env, f store.EventFilter, e models.Event) error {
	if f.Status == "" && f.EndpointID == "" {
		_, err := s.One(ctx, env, e.ID, "")
		return err
	}
	ds, err := s.Store.EventDeliveries(ctx, env, e.ID)
	if err != nil {
		return err
	}
	var last models.Event
	for _, d := range ds {
		if (f.Status != "" && d.Status != f.Status) || (f.EndpointID != "" && d.EndpointID != f.EndpointID) {
			continue
		}
		if last, err = s.Store.ReplayDeliveries(ctx, env, e.ID, d.EndpointID); err != nil {
			return err
		}
	}
	s.dispatch(ctx, last)
	return nil
}

func isConflict(err error) bool {
	var c *apperr.ConflictError
	return errors.As(err, &c)
}

// ResumeStale claims the running jobs nobody has advanced for StaleAfter (their process
// died or restarted) and runs them here, from their cursor. It returns how many.
func (s *Service) ResumeStale(ctx context.Context) (int, error) {
	now := time.Now().UTC()
	stale := s.StaleAfter
	if stale <= 0 {
		stale = DefaultStaleAfter
	}
	jobs, err := s.Store.ClaimStaleReplayJobs(ctx, now.Add(-stale), now, 10)
	for _, j := range jobs {
		s.log().Info("resuming replay job", "job_id", j.ID, "replayed", j.Replayed, "matched", j.Matched)
		s.spawn(j)
	}
	if err != nil {
		return len(jobs), fmt.Errorf("resume replay jobs: %w", err)
	}
	return len(jobs), nil
}

// RunResumer calls ResumeStale now and then every interval until ctx ends.
func (s *Service) RunResumer(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.ResumeStale(ctx); err != nil && ctx.Err() == nil {
			s.log().Warn("replay job resumer", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// EnvOf is the environment an event belongs to.
func EnvOf(e models.Event) Env {
	return Env{OrganizationID: e.OrganizationID, ID: e.EnvironmentID, Name: e.Environment}
}

// EventByID loads an event by id alone, for the delivery activity: its id comes from the
// workflow input, which the starter built from the stored row, never from a client.
func (s *Store) EventByID(ctx context.Context, id string) (models.Event, Env, error) {
	var e models.Event
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&e).Error; err != nil {
		return e, Env{}, notFound(err, "event "+id)
	}
	return e, EnvOf(e), nil
}

// SeedAttempt stores one delivery attempt as given and changes no status: tests set up
// a history with it. It is not a second attempt writer: deliveries record theirs with
// RecordDeliveryAttempt. It stays exported (not in export_test.go) because the api and
// dashboard tests seed attempts with it.
func (s *Store) SeedAttempt(ctx context.Context, env Env, a *models.DeliveryAttempt) error {
	stampAttempt(a, env)
	if err := s.db.WithContext(ctx).Create(a).Error; err != nil {
		return fmt.Errorf("record delivery attempt of %s: %w", a.EventID, err)
	}
	return nil
}

// DeliveryAttempts lists an event's attempts, oldest first.
func (s *Store) DeliveryAttempts(ctx context.Context, env Env, eventID string) ([]models.DeliveryAttempt, error) {
	var as []models.DeliveryAttempt
	if err := s.in(ctx, env).Where("event_id = ?", eventID).Order("started_at, number").Find(&as).Error; err != nil {
		return nil, fmt.Errorf("attempts of %s: %w", eventID, err)
	}
	return as, nil
}

// MarkDispatched records that a workflow runs for the event. runID "" (the run was
// started earlier, by someone else) keeps the run id already stored.
func (s *Store) MarkDispatched(ctx context.Context, env Env, eventID, workflowID, runID string, at time.Time) error {
	set := map[string]any{"dispatched_at": at, "workflow_id": workflowID}
	if runID != "" {
		set["run_id"] = runID
	}
	return updateEvent(s.db.WithContext(ctx), env, eventID, set, "mark dispatched")
}

// updateEvent sets columns of one event of the environment (ErrNotFound: there is no
// such event); doing names the change in the error.
func updateEvent(db *gorm.DB, env Env, eventID string, set map[string]any, doing string) error {
	res := scope(db.Model(&models.Event{}), env).Where("id = ?", eventID).Updates(set)
	if res.Error != nil {
		return fmt.Errorf("%s event %s: %w", doing, eventID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("event %s: %w", eventID, apperr.ErrNotFound)
	}
	return nil
}

// UndispatchedEvents lists, oldest first, up to limit events of every environment created
// before `before` that have no workflow yet. Only the sweeper calls it: it works for all
// tenants, so it is deliberately not environment-scoped.
func (s *Store) UndispatchedEvents(ctx context.Context, before time.Time, limit int) ([]models.Event, error) {
	return unstarted[models.Event](ctx, s.db, "list undispatched events", "created_at, seq", limit,
		"dispatched_at IS NULL AND created_at < ?", before)
}

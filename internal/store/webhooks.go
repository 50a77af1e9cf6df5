package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 30, name: "webhooks", sql: `
CREATE TABLE webhook_endpoints (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment_id TEXT NOT NULL UNIQUE REFERENCES environments(id),
	url TEXT NOT NULL,
	method TEXT NOT NULL CHECK (method IN ('POST', 'GET')),
	enabled BOOLEAN NOT NULL,
	secret TEXT NOT NULL,
	previous_secret TEXT NOT NULL DEFAULT '',
	previous_until {{ts}},
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL
);
CREATE TABLE delivery_attempts (
	id TEXT PRIMARY KEY,
	event_id TEXT NOT NULL,
	environment_id TEXT NOT NULL REFERENCES environments(id),
	run_id TEXT NOT NULL DEFAULT '',
	number INTEGER NOT NULL,
	trigger TEXT NOT NULL,
	url TEXT NOT NULL DEFAULT '',
	method TEXT NOT NULL DEFAULT '',
	started_at {{ts}} NOT NULL,
	duration_ms BIGINT NOT NULL DEFAULT 0,
	status_code INTEGER NOT NULL DEFAULT 0,
	response_excerpt TEXT NOT NULL DEFAULT '',
	error TEXT NOT NULL DEFAULT '',
	outcome TEXT NOT NULL,
	created_at {{ts}} NOT NULL
);
CREATE INDEX delivery_attempts_event ON delivery_attempts (event_id, started_at)`})
}

// EndpointSettings is what a PUT of the webhook endpoint sets.
type EndpointSettings struct {
	URL     string
	Method  string
	Enabled bool
}

// WebhookEndpoint loads an environment's endpoint (ErrNotFound before the first PUT).
func (s *Store) WebhookEndpoint(ctx context.Context, env Env) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	if err := s.in(ctx, env).Take(&ep).Error; err != nil {
		return ep, notFound(err, "webhook endpoint")
	}
	return ep, nil
}

// PutWebhookEndpoint replaces an environment's settings, creating the endpoint with
// newSecret on the first call (created tells which). The secret is kept on later calls.
func (s *Store) PutWebhookEndpoint(ctx context.Context, env Env, set EndpointSettings, newSecret string, now time.Time) (ep models.WebhookEndpoint, created bool, err error) {
	for try := 0; try < 2; try++ {
		ep, created, err = s.putEndpointOnce(ctx, env, set, newSecret, now)
		if err == nil || !isUniqueViolation(err) {
			break
		}
		// A concurrent first PUT created it: the second try updates that row.
	}
	return ep, created, err
}

func (s *Store) putEndpointOnce(ctx context.Context, env Env, set EndpointSettings, newSecret string, now time.Time) (models.WebhookEndpoint, bool, error) {
	res := s.in(ctx, env).Model(&models.WebhookEndpoint{}).Updates(map[string]any{
		"url": set.URL, "method": set.Method, "enabled": set.Enabled, "updated_at": now,
	})
	if res.Error != nil {
		return models.WebhookEndpoint{}, false, fmt.Errorf("update webhook endpoint: %w", res.Error)
	}
	if res.RowsAffected > 0 {
		ep, err := s.WebhookEndpoint(ctx, env)
		return ep, false, err
	}
	ep := models.WebhookEndpoint{
		ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
		URL: set.URL, Method: set.Method, Enabled: set.Enabled, Secret: newSecret,
		CreatedAt: now, UpdatedAt: now,
	}
	// Select("*") writes Enabled=false too (GORM skips zero values otherwise).
	if err := s.db.WithContext(ctx).Select("*").Create(&ep).Error; err != nil {
		if isUniqueViolation(err) {
			return ep, false, err
		}
		return ep, false, fmt.Errorf("create webhook endpoint: %w", err)
	}
	return ep, true, nil
}

// RotateWebhookSecret makes newSecret current; the old one keeps signing until now+overlap.
func (s *Store) RotateWebhookSecret(ctx context.Context, env Env, newSecret string, now time.Time, overlap time.Duration) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := scope(tx, env).Take(&ep).Error; err != nil {
			return notFound(err, "webhook endpoint")
		}
		until := now.Add(overlap)
		ep.PreviousSecret, ep.PreviousUntil, ep.Secret, ep.UpdatedAt = ep.Secret, &until, newSecret, now
		res := scope(tx, env).Model(&models.WebhookEndpoint{}).Where("id = ?", ep.ID).Updates(map[string]any{
			"secret": ep.Secret, "previous_secret": ep.PreviousSecret, "previous_until": until, "updated_at": now,
		})
		if res.Error != nil {
			return fmt.Errorf("rotate webhook secret: %w", res.Error)
		}
		return keepAnswer(ctx, tx, ep)
	})
	return ep, err
}

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

// RecordAttempt stores one delivery attempt.
func (s *Store) RecordAttempt(ctx context.Context, env Env, a *models.DeliveryAttempt) error {
	if a.ID == "" {
		a.ID = uuid.NewString()
	}
	a.EnvironmentID = env.ID
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now().UTC()
	}
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

// SetEventStatus sets an event's delivery status.
func (s *Store) SetEventStatus(ctx context.Context, env Env, eventID, status string) error {
	res := s.in(ctx, env).Model(&models.Event{}).Where("id = ?", eventID).
		Updates(map[string]any{"status": status, "updated_at": time.Now().UTC()})
	if res.Error != nil {
		return fmt.Errorf("set status of event %s: %w", eventID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("event %s: %w", eventID, apperr.ErrNotFound)
	}
	return nil
}

// MarkDispatched records that a workflow runs for the event. runID "" (the run was
// started earlier, by someone else) keeps the run id already stored.
func (s *Store) MarkDispatched(ctx context.Context, env Env, eventID, workflowID, runID string, at time.Time) error {
	set := map[string]any{"dispatched_at": at, "workflow_id": workflowID}
	if runID != "" {
		set["run_id"] = runID
	}
	res := s.in(ctx, env).Model(&models.Event{}).Where("id = ?", eventID).Updates(set)
	if res.Error != nil {
		return fmt.Errorf("mark event %s dispatched: %w", eventID, res.Error)
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
	var events []models.Event
	err := s.db.WithContext(ctx).Where("dispatched_at IS NULL AND created_at < ?", before).
		Order("created_at, seq").Limit(limit).Find(&events).Error
	if err != nil {
		return nil, fmt.Errorf("list undispatched events: %w", err)
	}
	return events, nil
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/platform/apperr"
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

// MaxEndpoints is how many webhook endpoints an environment may have (CONTRACT §13).
const MaxEndpoints = 16

// ErrTooManyEndpoints refuses an environment's 17th endpoint. It comes wrapped in an
// *apperr.InvalidError with CodeTooManyEndpoints.
var ErrTooManyEndpoints = errors.New("too many webhook endpoints")

// CodeTooManyEndpoints is the error code of ErrTooManyEndpoints.
const CodeTooManyEndpoints = "too_many_endpoints"

// EndpointPatch is a PATCH of an endpoint; nil fields are left as they are.
type EndpointPatch struct {
	URL, Method, Description *string
	EventTypes               []string // nil: unchanged
	RetryPolicy              *models.RetryPolicy
	Enabled                  *bool
}

// lockEnv serialises the endpoint writes of one environment (the count of §13's limit
// and the singular PUT's "create when none"): PostgreSQL locks the environment's row;
// a SQLite write transaction is exclusive already (_txlock=immediate).
func (s *Store) lockEnv(tx *gorm.DB, env Env) error {
	if s.dialect != "postgres" {
		return nil
	}
	var id string
	if err := tx.Raw("SELECT id FROM environments WHERE id = ? FOR UPDATE", env.ID).Scan(&id).Error; err != nil {
		return fmt.Errorf("lock environment: %w", err)
	}
	return nil
}

// forUpdate locks the rows a query reads until the transaction ends (PostgreSQL; SQLite
// transactions are exclusive).
func (s *Store) forUpdate(q *gorm.DB) *gorm.DB {
	if s.dialect != "postgres" {
		return q
	}
	return q.Clauses(clause.Locking{Strength: "UPDATE"})
}

// keepEndpoint keeps the answer of a change of ep without its signing secret (CONTRACT
// §17): a replay shows the endpoint's secret as it is then.
func (s *Store) keepEndpoint(tx *gorm.DB, env Env, reply EndpointReply, ep models.WebhookEndpoint) error {
	if reply == nil {
		return nil
	}
	return reply.KeepSecret(s.txOf(tx, env), ep, ep.ID, ep.Secret)
}

// CreateWebhookEndpoint stores a new endpoint (ID, timestamps and the disabled reason are
// set here), refusing a 17th one of the environment even under concurrent creates.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, env Env, ep models.WebhookEndpoint, now time.Time, reply EndpointReply) (models.WebhookEndpoint, error) {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockEnv(tx, env); err != nil {
			return err
		}
		var n int64
		if err := scope(tx.Model(&models.WebhookEndpoint{}), env).Count(&n).Error; err != nil {
			return fmt.Errorf("count webhook endpoints: %w", err)
		}
		if n >= MaxEndpoints {
			return apperr.Invalid(ErrTooManyEndpoints, CodeTooManyEndpoints, "",
				"This environment already has %d webhook endpoints, the most it may have; delete one first.", MaxEndpoints)
		}
		var err error
		ep, err = createEndpoint(tx, env, ep, now)
		if err != nil {
			return err
		}
		return s.keepEndpoint(tx, env, reply, ep)
	})
	return ep, err
}

func createEndpoint(tx *gorm.DB, env Env, ep models.WebhookEndpoint, now time.Time) (models.WebhookEndpoint, error) {
	ep.ID, ep.OrganizationID, ep.EnvironmentID = uuid.NewString(), env.OrganizationID, env.ID
	ep.CreatedAt, ep.UpdatedAt, ep.FailingSince = now, now, nil
	ep.DisabledReason, ep.EnabledAt = "", &now
	if !ep.Enabled {
		ep.EnabledAt = nil
		ep.DisabledReason = models.DisabledManual
	}
	if len(ep.EventTypes) == 0 {
		ep.EventTypes = []string{"*"}
	}
	if ep.RetryPolicy == (models.RetryPolicy{}) {
		ep.RetryPolicy = models.DefaultRetryPolicy
	}
	// Select("*") writes Enabled=false too (GORM skips zero values otherwise).
	if err := tx.Select("*").Create(&ep).Error; err != nil {
		return ep, fmt.Errorf("create webhook endpoint: %w", err)
	}
	return ep, nil
}

// WebhookEndpoints lists an environment's endpoints, newest first (CONTRACT §9).
func (s *Store) WebhookEndpoints(ctx context.Context, env Env, page Page) ([]models.WebhookEndpoint, bool, error) {
	rows, more, err := paginate[models.WebhookEndpoint](s.in(ctx, env), "webhook_endpoints", page)
	if err != nil {
		return nil, false, fmt.Errorf("webhook endpoints: %w", err)
	}
	return rows, more, nil
}

// AllWebhookEndpoints lists every endpoint of the environment, oldest first (at most
// MaxEndpoints): the dashboard and the outbox need them all.
func (s *Store) AllWebhookEndpoints(ctx context.Context, env Env) ([]models.WebhookEndpoint, error) {
	var eps []models.WebhookEndpoint
	if err := s.in(ctx, env).Order("created_at, id").Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("webhook endpoints: %w", err)
	}
	return eps, nil
}

// WebhookEndpointByID loads one endpoint of the environment.
func (s *Store) WebhookEndpointByID(ctx context.Context, env Env, id string) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	if err := s.in(ctx, env).Where("id = ?", id).Take(&ep).Error; err != nil {
		return ep, notFound(err, "webhook endpoint "+id)
	}
	return ep, nil
}

// WebhookEndpoint loads the environment's oldest endpoint, the one the §8 singular routes
// act on (ErrNotFound when there is none).
func (s *Store) WebhookEndpoint(ctx context.Context, env Env) (models.WebhookEndpoint, error) {
	return oldestEndpoint(s.in(ctx, env))
}

func isNotFound(err error) bool { return errors.Is(err, apperr.ErrNotFound) }

func oldestEndpoint(q *gorm.DB) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	if err := q.Order("created_at, id").Take(&ep).Error; err != nil {
		return ep, notFound(err, "webhook endpoint")
	}
	return ep, nil
}

// enabledChange is the columns that move an endpoint to enabled or disabled by hand:
// enabling clears the reason and restarts the failing window; disabling says "manual"
// (an endpoint already disabled keeps its reason).
func enabledChange(cur models.WebhookEndpoint, enabled bool, now time.Time) map[string]any {
	switch {
	case enabled && !cur.Enabled:
		return map[string]any{"enabled": true, "disabled_reason": "", "failing_since": nil, "enabled_at": now}
	case !enabled && cur.Enabled:
		return map[string]any{"enabled": false, "disabled_reason": models.DisabledManual}
	}
	return map[string]any{}
}

// UpdateWebhookEndpoint applies a PATCH to one endpoint.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, env Env, id string, p EndpointPatch, now time.Time, reply EndpointReply) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.forUpdate(scope(tx, env)).Where("id = ?", id).Take(&ep).Error; err != nil {
			return notFound(err, "webhook endpoint "+id)
		}
		var err error
		if ep, err = patchEndpoint(tx, env, ep, p, now); err != nil {
			return err
		}
		return s.keepEndpoint(tx, env, reply, ep)
	})
	return ep, err
}

// patchEndpoint applies p to cur, read in tx, and returns the endpoint as saved.
func patchEndpoint(tx *gorm.DB, env Env, cur models.WebhookEndpoint, p EndpointPatch, now time.Time) (models.WebhookEndpoint, error) {
	set := map[string]any{"updated_at": now}
	if p.Enabled != nil {
		for k, v := range enabledChange(cur, *p.Enabled, now) {
			set[k] = v
		}
	}
	for col, v := range map[string]*string{"url": p.URL, "method": p.Method, "description": p.Description} {
		if v != nil {
			set[col] = *v
		}
	}
	if p.EventTypes != nil {
		b, err := json.Marshal(p.EventTypes)
		if err != nil {
			return cur, fmt.Errorf("encode event types: %w", err)
		}
		set["event_types"] = string(b)
	}
	if r := p.RetryPolicy; r != nil {
		set["retry_initial_interval_ms"], set["retry_backoff_coefficient"] = r.InitialIntervalMS, r.BackoffCoefficient
		set["retry_maximum_interval_ms"], set["retry_maximum_attempts"] = r.MaximumIntervalMS, r.MaximumAttempts
	}
	if err := scope(tx.Model(&models.WebhookEndpoint{}), env).Where("id = ?", cur.ID).Updates(set).Error; err != nil {
		return cur, fmt.Errorf("update webhook endpoint %s: %w", cur.ID, err)
	}
	var ep models.WebhookEndpoint
	if err := scope(tx, env).Where("id = ?", cur.ID).Take(&ep).Error; err != nil {
		return cur, fmt.Errorf("reload webhook endpoint %s: %w", cur.ID, err)
	}
	return ep, nil
}

// DeleteWebhookEndpoint removes an endpoint. Its unfinished deliveries end skipped
// (endpoint_deleted) and their events' statuses are summarised again, in the same
// transaction; its past deliveries and attempts stay.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, env Env, id string, now time.Time, reply EndpointReply) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.forUpdate(scope(tx, env)).Where("id = ?", id).Take(&ep).Error; err != nil {
			return notFound(err, "webhook endpoint "+id)
		}
		if err := scope(tx, env).Where("id = ?", id).Delete(&models.WebhookEndpoint{}).Error; err != nil {
			return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
		}
		unfinished := scope(tx.Model(&models.WebhookDelivery{}), env).
			Where("endpoint_id = ? AND status IN ?", id, unfinishedStatuses).Session(&gorm.Session{})
		// The events are locked before their deliveries change, as every delivery change
		// does (lockEvents); a second look takes in what changed while the first waited.
		var eventIDs []string
		for look := 0; look < 2; look++ {
			var ids []string
			if err := unfinished.Pluck("event_id", &ids).Error; err != nil {
				return fmt.Errorf("unfinished deliveries of %s: %w", id, err)
			}
			if err := s.lockEvents(tx, ids...); err != nil {
				return err
			}
			eventIDs = append(eventIDs, ids...)
		}
		slices.Sort(eventIDs)
		eventIDs = slices.Compact(eventIDs)
		if err := unfinished.Updates(map[string]any{
			"status": models.EventSkipped, "last_error": models.DeliveryEndpointDeleted, "updated_at": now,
		}).Error; err != nil {
			return fmt.Errorf("skip deliveries of %s: %w", id, err)
		}
		if err := summarizeEvents(tx, now, eventIDs...); err != nil {
			return err
		}
		return s.keepEndpoint(tx, env, reply, ep)
	})
	return ep, err
}

// PutOldestWebhookEndpoint is the §8 PUT of the singular routes (CONTRACT §13): it
// applies p to the environment's oldest endpoint or, when there is none, creates create
// (created tells which). The environment is locked first, so that concurrent first PUTs
// make one endpoint (and one secret), the others updating it.
func (s *Store) PutOldestWebhookEndpoint(ctx context.Context, env Env, create models.WebhookEndpoint, p EndpointPatch, now time.Time) (ep models.WebhookEndpoint, created bool, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockEnv(tx, env); err != nil {
			return err
		}
		cur, err := oldestEndpoint(scope(tx, env))
		switch {
		case isNotFound(err):
			created = true
			ep, err = createEndpoint(tx, env, create, now)
		case err == nil:
			ep, err = patchEndpoint(tx, env, cur, p, now)
		}
		return err
	})
	return ep, created, err
}

// RotateEndpointSecret makes newSecret the endpoint's current secret; the old one keeps
// signing until now+overlap.
func (s *Store) RotateEndpointSecret(ctx context.Context, env Env, id, newSecret string, now time.Time, overlap time.Duration, reply EndpointReply) (models.WebhookEndpoint, error) {
	var ep models.WebhookEndpoint
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.forUpdate(scope(tx, env)).Where("id = ?", id).Take(&ep).Error; err != nil {
			return notFound(err, "webhook endpoint "+id)
		}
		until := now.Add(overlap)
		ep.PreviousSecret, ep.PreviousUntil, ep.Secret, ep.UpdatedAt = ep.Secret, &until, newSecret, now
		res := scope(tx, env).Model(&models.WebhookEndpoint{}).Where("id = ?", ep.ID).Updates(map[string]any{
			"secret": ep.Secret, "previous_secret": ep.PreviousSecret, "previous_until": until, "updated_at": now,
		})
		if res.Error != nil {
			return fmt.Errorf("rotate webhook secret: %w", res.Error)
		}
		return s.keepEndpoint(tx, env, reply, ep)
	})
	return ep, err
}

package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/models"
)

// Endpoint health (CONTRACT §23): the store keeps the facts — the row's times, written
// by every attempt record when they are more than healthTimesSlack stale, and the state
// the webhook domain saves — and reports them; the domain decides what they mean and
// what to announce. Lock order: an attempt's record locks its event, then the health
// row; an endpoint's deletion locks the endpoint alone, and the pages of its job that end
// its unfinished deliveries lock events alone (endpoint_deletion.go); the endpoint writes
// lock the endpoint, then the health row. No path takes a health row before an event or
// an endpoint, nor an endpoint after an event.

// healthTimesSlack is how stale the health row's times may be before an attempt's record
// writes them: the attempts of a busy healthy endpoint leave its row alone, rather than
// queueing on it.
const healthTimesSlack = time.Second

// AttemptRecord is what recording an attempt found, for the webhook domain to judge the
// endpoint's health.
type AttemptRecord struct {
	EndpointID  string
	EventType   string // the attempted event's type
	MaxAttempts int    // the delivery's retry policy's (0: none stored, the default's)
	// Written: the attempt is new (not a retried write of one already stored).
	Written bool
	// Health is the endpoint's health row as the record read it (HealthFound false: none,
	// the endpoint deleted). Its times may be a second behind; the rest is what the
	// domain gates its slow path on, locking the row then (LockHealth).
	Health      models.EndpointHealth
	HealthFound bool
	// Ordered and ObjectID are the delivery's lane (CONTRACT §26): an ordered delivery
	// that ends releases the next of its lane, whose lock the record took first.
	Ordered  bool
	ObjectID string
}

// healthTimesSQL moves the health row's times forward to the attempt's start when they
// are stale; the caller adds the row's condition. @counts: the attempt counts toward its
// endpoint's health, as the webhook domain says (AttemptChange.CountsForHealth).
const healthTimesSQL = `UPDATE endpoint_health AS h SET
	last_attempt_at = CASE WHEN h.last_attempt_at IS NULL OR h.last_attempt_at < @attempt_at THEN @attempt_at ELSE h.last_attempt_at END,
	last_success_at = CASE WHEN @succeeded AND (h.last_success_at IS NULL OR h.last_success_at < @attempt_at) THEN @attempt_at ELSE h.last_success_at END
WHERE @counts AND (h.last_attempt_at IS NULL OR h.last_attempt_at < @stale
	OR (@succeeded AND (h.last_success_at IS NULL OR h.last_success_at < @stale)))`

// healthColumns lists the health row's columns but its key, of table alias t.
func healthColumns(t string) string {
	cols := []string{"environment_id", "last_attempt_at", "last_success_at", "failing_since", "spell_failed_at",
		"turned_failing", "failing_announced", "recovery_pending", "recovery_from", "exhausted_until", "exhausted_suppressed", "exhausted_delivery_id"}
	for i, c := range cols {
		cols[i] = t + "." + c
	}
	return strings.Join(cols, ", ")
}

// touchHealth is healthTimesSQL for one endpoint, then the row as it is (the step-by-step
// record: SQLite, and the single-endpoint releases).
func touchHealth(tx *gorm.DB, a *models.DeliveryAttempt, counts bool) (models.EndpointHealth, bool, error) {
	args := map[string]any{
		"attempt_at": a.StartedAt, "succeeded": a.Outcome == models.AttemptSucceeded,
		"stale": a.StartedAt.Add(-healthTimesSlack), "counts": counts, "endpoint": a.EndpointID,
	}
	if err := tx.Exec(healthTimesSQL+` AND h.endpoint_id = @endpoint`, args).Error; err != nil {
		return models.EndpointHealth{}, false, fmt.Errorf("health of endpoint %s: %w", a.EndpointID, err)
	}
	var hs []models.EndpointHealth
	if err := tx.Where("endpoint_id = ?", a.EndpointID).Find(&hs).Error; err != nil {
		return models.EndpointHealth{}, false, fmt.Errorf("health of endpoint %s: %w", a.EndpointID, err)
	}
	if len(hs) == 0 {
		return models.EndpointHealth{}, false, nil
	}
	return hs[0], true, nil
}

// insertHealth gives a new endpoint its health row.
func insertHealth(tx *gorm.DB, ep *models.WebhookEndpoint) error {
	h := models.EndpointHealth{EndpointID: ep.ID, EnvironmentID: ep.EnvironmentID}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&h).Error; err != nil {
		return fmt.Errorf("health of endpoint %s: %w", ep.ID, err)
	}
	return nil
}

// AdoptHealth gives the endpoint a health row if it has none: one created by a process
// of a release before endpoint health, during a rolling upgrade after migration 96 ran.
// A row adopted for an endpoint deleted meanwhile is an orphan the health check removes.
func (tx *Tx) AdoptHealth(endpointID string) error {
	return insertHealth(tx.db, &models.WebhookEndpoint{ID: endpointID, EnvironmentID: tx.env.ID})
}

// LockHealth loads the endpoint's health row for update (found false: none, the endpoint
// was deleted). Take it after the event or endpoint the change locks, never before.
func (tx *Tx) LockHealth(endpointID string) (h models.EndpointHealth, found bool, err error) {
	q := forUpdate(scope(tx.db, tx.env), tx.dialect)
	var hs []models.EndpointHealth
	if err := q.Where("endpoint_id = ?", endpointID).Find(&hs).Error; err != nil {
		return h, false, fmt.Errorf("health of endpoint %s: %w", endpointID, err)
	}
	if len(hs) == 0 {
		return h, false, nil
	}
	return hs[0], true, nil
}

// SaveHealth writes every column of a health row locked by LockHealth.
func (tx *Tx) SaveHealth(h *models.EndpointHealth) error {
	res := scope(tx.db.Model(&models.EndpointHealth{}), tx.env).Where("endpoint_id = ?", h.EndpointID).
		Select("*").Omit("endpoint_id", "environment_id").UpdateColumns(h)
	if res.Error != nil {
		return fmt.Errorf("save health of endpoint %s: %w", h.EndpointID, res.Error)
	}
	return nil
}

// DeleteHealth removes the health row of an endpoint that is gone.
func (tx *Tx) DeleteHealth(endpointID string) error {
	if err := scope(tx.db, tx.env).Where("endpoint_id = ?", endpointID).Delete(&models.EndpointHealth{}).Error; err != nil {
		return fmt.Errorf("delete health of endpoint %s: %w", endpointID, err)
	}
	return nil
}

// DeliveryOutline is what a delivery-exhausted event says of the delivery.
type DeliveryOutline struct {
	ID, EventID, EventType string
	Attempts               int
	LastError              string
}

// DeliveryOutline loads a delivery with its event's type and its attempt count (found
// false: it is gone, purged by retention).
func (tx *Tx) DeliveryOutline(deliveryID string) (o DeliveryOutline, found bool, err error) {
	var rows []DeliveryOutline
	err = tx.db.Raw(`SELECT d.id, d.event_id, e.type AS event_type, d.last_error,
	(SELECT count(*) FROM delivery_attempts a WHERE a.event_id = d.event_id AND a.delivery_id = d.id) AS attempts
FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.id = ? AND d.environment_id = ?`, deliveryID, tx.env.ID).Scan(&rows).Error
	if err != nil {
		return o, false, fmt.Errorf("delivery %s: %w", deliveryID, err)
	}
	if len(rows) == 0 {
		return o, false, nil
	}
	return rows[0], true, nil
}

// HealthDue is an endpoint whose health row the minute check must look at.
type HealthDue struct {
	Env        Env
	EndpointID string
}

// HealthDue lists, across environments, at most limit endpoints whose failing spell
// began at or before failingBefore and has not turned failing yet, or whose delivery-exhausted
// minute ended at or before now with deliveries held back (CONTRACT §23). The domain
// judges each again under its lock.
func (s *Store) HealthDue(ctx context.Context, now, failingBefore time.Time, limit int) ([]HealthDue, error) {
	var rows []struct{ OrganizationID, EnvironmentID, Name, EndpointID string }
	err := s.db.WithContext(ctx).Raw(`SELECT env.organization_id, env.id AS environment_id, env.name, h.endpoint_id
FROM endpoint_health h JOIN environments env ON env.id = h.environment_id
WHERE (h.failing_since <= ? AND NOT h.turned_failing)
	OR (h.exhausted_until <= ? AND h.exhausted_suppressed > 0)
ORDER BY h.endpoint_id LIMIT ?`, failingBefore, now, limit).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("endpoints due a health check: %w", err)
	}
	out := make([]HealthDue, len(rows))
	for i, r := range rows {
		out[i] = HealthDue{Env: Env{OrganizationID: r.OrganizationID, ID: r.EnvironmentID, Name: r.Name}, EndpointID: r.EndpointID}
	}
	return out, nil
}

// PurgeOrphanHealth deletes at most limit health rows whose endpoint was deleted (the
// deletion leaves them: it never locks a health row).
func (s *Store) PurgeOrphanHealth(ctx context.Context, limit int) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM endpoint_health WHERE endpoint_id IN (
	SELECT h.endpoint_id FROM endpoint_health h
	WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = h.endpoint_id) LIMIT ?)`, limit)
	if res.Error != nil {
		return 0, fmt.Errorf("purge health of deleted endpoints: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// withHealth loads the health rows of endpoints of environment envID onto them (one
// query). An endpoint without one keeps Health nil.
func withHealth(db *gorm.DB, envID string, eps ...*models.WebhookEndpoint) error {
	if len(eps) == 0 {
		return nil
	}
	ids := make([]string, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	var hs []models.EndpointHealth
	if err := db.Where("environment_id = ? AND endpoint_id IN ?", envID, ids).Find(&hs).Error; err != nil {
		return fmt.Errorf("health of endpoints: %w", err)
	}
	for i := range hs {
		for _, ep := range eps {
			if ep.ID == hs[i].EndpointID {
				ep.Health = &hs[i]
			}
		}
	}
	rates, err := successRates(db, envID, ids, SuccessRateSince(time.Now()))
	if err != nil {
		return err
	}
	for _, ep := range eps {
		if r, ok := rates[ep.ID]; ok {
			if ep.Health == nil {
				ep.Health = &models.EndpointHealth{EndpointID: ep.ID, EnvironmentID: envID}
			}
			ep.Health.SuccessRate24h = &r
		}
	}
	return nil
}

func ptrs[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

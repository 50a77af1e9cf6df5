package store

import (
	"context"
	"fmt"

	"github.com/revops/revops/models"
)

// Paced endpoints (CONTRACT §27): an endpoint's rate_limit, in two columns (0 and ""
// when unpaced), and what the writes that pace an endpoint hand to AfterCommit so that
// its new rate reaches the engine at once (the minute check reconciles what that
// missed: PacedEndpointsAfter).
func init() {
	register(migration{version: 140, name: "webhook_endpoints_rate_limit", sql: `
ALTER TABLE webhook_endpoints ADD COLUMN rate_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints ADD COLUMN rate_period TEXT NOT NULL DEFAULT '';
CREATE INDEX webhook_endpoints_paced ON webhook_endpoints (id) WHERE rate_limit > 0`})
}

// Pace is a paced endpoint's new rate, per second (0: unpaced, or deleted), which a
// committed transaction hands to AfterCommit for the engine's weight override.
type Pace struct {
	EndpointID string
	Rate       float64
}

// Repace records that endpoint id's rate is now rate (0: none) once the transaction
// commits; a later record of the same endpoint replaces an earlier one.
func (tx *Tx) Repace(id string, rate float64) {
	for i := range tx.paces {
		if tx.paces[i].EndpointID == id {
			tx.paces[i].Rate = rate
			return
		}
	}
	tx.paces = append(tx.paces, Pace{EndpointID: id, Rate: rate})
}

// PacedEndpoints lists the environment's paced endpoints (at most MaxEndpoints); lock
// the environment first (LockEndpoints) to decide its cap on them.
func (tx *Tx) PacedEndpoints() ([]models.WebhookEndpoint, error) {
	var eps []models.WebhookEndpoint
	if err := scope(tx.db, tx.env).Select("id", "rate_limit", "rate_period").Where("rate_limit > 0").
		Order("id").Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("paced webhook endpoints: %w", err)
	}
	return eps, nil
}

// CountPacedEndpoints counts the paced endpoints of every environment: the deployment's
// cap (CONTRACT §27) is on all of them, since they share the paced task queue.
func (tx *Tx) CountPacedEndpoints() (int64, error) {
	var n int64
	if err := tx.db.Model(&models.WebhookEndpoint{}).Where("rate_limit > 0").Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count paced webhook endpoints: %w", err)
	}
	return n, nil
}

// PacedEndpointsAfter lists up to limit paced endpoints of every environment whose id
// follows after, in id order (id, rate_limit and rate_period only): the minute check's
// bounded pages (it works for all tenants, like UnstartedJobs).
func (s *Store) PacedEndpointsAfter(ctx context.Context, after string, limit int) ([]models.WebhookEndpoint, error) {
	var eps []models.WebhookEndpoint
	if err := s.db.WithContext(ctx).Select("id", "rate_limit", "rate_period").
		Where("rate_limit > 0 AND id > ?", after).Order("id").Limit(limit).Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("paced webhook endpoints: %w", err)
	}
	return eps, nil
}

// EndpointPaces is the rate per second of each paced endpoint among ids (the unpaced and
// the deleted are left out): what a delivery run's series read when they begin.
func (s *Store) EndpointPaces(ctx context.Context, ids []string) (map[string]float64, error) {
	out := map[string]float64{}
	if len(ids) == 0 {
		return out, nil
	}
	var eps []models.WebhookEndpoint
	if err := s.db.WithContext(ctx).Select("id", "rate_limit", "rate_period").
		Where("id IN ? AND rate_limit > 0", ids).Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("paces of webhook endpoints: %w", err)
	}
	for _, ep := range eps {
		out[ep.ID] = ep.PacedRate()
	}
	return out, nil
}

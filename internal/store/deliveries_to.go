package store

import (
	"context"
	"fmt"

	"github.com/revops/revops/models"
)

// Migration 110: the Deliveries page filtered by one endpoint (CONTRACT §23) pages that
// endpoint's deliveries, newest first. With a status, webhook_deliveries_env_endpoint
// (environment_id, endpoint_id, status, created_at, id) gives them in order already; without,
// this index does, so a page reads a page of index entries whatever the endpoint's share
// of the events or how long ago it last had one. Built concurrently: the table is large
// and written on every change.
func init() {
	register(migration{version: 110, name: "webhook_deliveries_env_endpoint_created", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS webhook_deliveries_env_endpoint_created ON webhook_deliveries (environment_id, endpoint_id, created_at, id)`})
}

// DeliveriesTo lists the environment's deliveries to endpointID (with status, those in
// it), newest first, paged by delivery id (a cursor not among them: ErrBadCursor). The
// events they deliver are read with EventsByID.
func (s *Store) DeliveriesTo(ctx context.Context, env Env, endpointID, status string, page Page) ([]models.WebhookDelivery, bool, error) {
	q := whereEq(s.in(ctx, env).Where("endpoint_id = ?", endpointID), "status", status)
	rows, more, err := paginate[models.WebhookDelivery](q, "webhook_deliveries", page)
	if err != nil {
		return nil, false, fmt.Errorf("deliveries to %s: %w", endpointID, err)
	}
	return rows, more, nil
}

// EventsByID reads the listed events of the environment, in the order of ids (ids
// without an event there are left out).
func (s *Store) EventsByID(ctx context.Context, env Env, ids []string) ([]models.Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []models.Event
	if err := s.in(ctx, env).Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("events by id: %w", err)
	}
	byID := make(map[string]models.Event, len(rows))
	for _, e := range rows {
		byID[e.ID] = e
	}
	out := make([]models.Event, 0, len(rows))
	for _, id := range ids {
		if e, ok := byID[id]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

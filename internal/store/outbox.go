package store

import (
	"context"
	"fmt"

	"github.com/revops/revops/models"
)

func init() {
	// The start queue takes an environment's overflow back from the outbox (PendingStarts):
	// this partial index holds only the events without a workflow, by environment, so the
	// query reads the rows it returns and no other environment's (the sweeper's
	// events_undispatched is across environments). Replayed events not reached yet are
	// few at any time: events_redispatch serves them. Built concurrently on PostgreSQL,
	// events being a live, large table.
	register(migration{version: 72, name: "events_env_undispatched", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS events_env_undispatched ON events (environment_id, created_at, seq) WHERE dispatched_at IS NULL`})
}

// PendingStarts lists up to limit events of the environment still owed a start: those
// without a workflow, oldest first (in the order each change wrote them), then those
// replayed whose workflow has not been reached yet, oldest replay first. Unlike the
// sweeper's lists there is no age threshold: the start queue asks for them when an
// environment's overflow has room again (CONTRACT §17, "Starts under bursts").
func (s *Store) PendingStarts(ctx context.Context, env Env, limit int) ([]models.Event, error) {
	var events []models.Event
	err := s.in(ctx, env).Where("dispatched_at IS NULL").Order("created_at, seq").Limit(limit).Find(&events).Error
	if err != nil {
		return nil, fmt.Errorf("list undispatched events of %s: %w", env.ID, err)
	}
	if len(events) == limit {
		return events, nil
	}
	var replayed []models.Event
	err = s.in(ctx, env).Where("redispatch_at IS NOT NULL").Order("redispatch_at, id").Limit(limit - len(events)).Find(&replayed).Error
	if err != nil {
		return nil, fmt.Errorf("list events of %s to redispatch: %w", env.ID, err)
	}
	return append(events, replayed...), nil
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// OutboxBacklogAge is how long the oldest event without a started delivery has waited
// (0 when none waits). It is an operational figure over every organization and
// environment, so it deliberately reads past the environment scope; it returns no data.
func (s *Store) OutboxBacklogAge(ctx context.Context) (time.Duration, error) {
	var rows []models.Event
	err := s.db.WithContext(ctx).Select("created_at").Where("dispatched_at IS NULL").
		Order("created_at").Limit(1).Find(&rows).Error
	if err != nil {
		return 0, fmt.Errorf("oldest undispatched event: %w", err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return max(time.Since(rows[0].CreatedAt), 0), nil
}

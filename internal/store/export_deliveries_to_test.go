package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// ExplainDeliveriesTo runs DeliveriesTo and returns EXPLAIN (ANALYZE, BUFFERS) of its list
// query (PostgreSQL), one line per plan row, as ExplainEvents does.
func (s *Store) ExplainDeliveriesTo(ctx context.Context, env Env, endpointID, status string, page Page) ([]string, error) {
	capture := &sqlCapture{}
	in := &Store{db: s.db.Session(&gorm.Session{Logger: capture}), dialect: s.dialect}
	if _, _, err := in.DeliveriesTo(ctx, env, endpointID, status, page); err != nil {
		return nil, err
	}
	var lines []string
	if err := s.db.WithContext(ctx).Raw("EXPLAIN (ANALYZE, BUFFERS) " + capture.last).Scan(&lines).Error; err != nil {
		return nil, fmt.Errorf("explain deliveries to: %w", err)
	}
	return lines, nil
}

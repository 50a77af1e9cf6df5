package store

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// DeliveryForAttemptThreeQueriesForTest is DeliveryForAttempt as it was before it became
// one query (delivery, event, endpoint read one after the other): the reference its
// test compares with field by field, and the baseline of its benchmark.
func (s *Store) DeliveryForAttemptThreeQueriesForTest(ctx context.Context, deliveryID string) (DeliveryTarget, error) {
	var t DeliveryTarget
	db := s.db.WithContext(ctx)
	if err := db.Where("id = ?", deliveryID).Take(&t.Delivery).Error; err != nil {
		return t, notFound(err, "delivery "+deliveryID)
	}
	if err := db.Where("id = ?", t.Delivery.EventID).Take(&t.Event).Error; err != nil {
		return t, notFound(err, "event "+t.Delivery.EventID)
	}
	t.Env = EnvOf(t.Event)
	var ep models.WebhookEndpoint
	err := scope(db, t.Env).Where("id = ?", t.Delivery.EndpointID).Take(&ep).Error
	switch {
	case err == nil:
		t.Endpoint = &ep
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return t, fmt.Errorf("endpoint of delivery %s: %w", deliveryID, err)
	}
	return t, nil
}

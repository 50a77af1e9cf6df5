package store

import (
	"context"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// ReplayedEvent is an event as a single-event replay leaves it, read in the replay's
// transaction: the row, its attempts (oldest first) and its deliveries (oldest first).
type ReplayedEvent struct {
	Event      models.Event
	Attempts   []models.DeliveryAttempt
	Deliveries []models.WebhookDelivery
}

// ReplayEvent is a replay that answers a request (POST /v1/events/{id}/replay):
// ReplayDeliveries, then the event read back with its attempts and deliveries and
// reply's answer (CONTRACT §14) kept from them, all in one transaction — the answer is
// stored with the replay or not at all, so a retry with the same Idempotency-Key never
// replays the event twice. A bulk replay, which answers once for many events, calls
// ReplayDeliveries instead.
func (s *Store) ReplayEvent(ctx context.Context, env Env, eventID, endpointID string, reply Keeper[ReplayedEvent]) (ReplayedEvent, error) {
	var out ReplayedEvent
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The replay runs in a savepoint of this transaction, its reads through it.
		in := &Store{db: tx, dialect: s.dialect}
		ev, err := in.ReplayDeliveries(ctx, env, eventID, endpointID)
		if err != nil {
			return err
		}
		attempts, err := in.AttemptsOf(ctx, env, []string{ev.ID})
		if err != nil {
			return err
		}
		deliveries, err := in.DeliveriesOf(ctx, env, []string{ev.ID})
		if err != nil {
			return err
		}
		out = ReplayedEvent{Event: ev, Attempts: attempts[ev.ID], Deliveries: deliveries[ev.ID]}
		return reply.Keep(s.txOf(tx, env), out)
	})
	if err != nil {
		return ReplayedEvent{}, err
	}
	return out, nil
}

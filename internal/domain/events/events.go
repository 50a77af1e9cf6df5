// Package events reads webhook events as people look at them: each event with its
// deliveries (one per endpoint, CONTRACT §13) and its attempts. The API (GET /v1/events,
// CONTRACT §9) and the dashboard's Deliveries pages both read through here, so that the
// two never assemble an event differently; each only converts the result.
package events

import (
	"context"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what the read needs of the database.
type Store interface {
	Event(ctx context.Context, env models.Env, id string) (models.Event, error)
	Events(ctx context.Context, env models.Env, f store.EventFilter, page store.Page) ([]models.Event, bool, error)
	AttemptsOf(ctx context.Context, env models.Env, eventIDs []string) (map[string][]models.DeliveryAttempt, error)
	DeliveriesOf(ctx context.Context, env models.Env, eventIDs []string) (map[string][]models.WebhookDelivery, error)
}

var _ Store = (*store.Store)(nil)

// Filter narrows the event lists (GET /v1/events, bulk replay, the dashboard's
// Deliveries page); empty fields do not filter. CreatedAfter is inclusive and
// CreatedBefore exclusive. With EndpointID, events match when they have a delivery to
// that endpoint, and Status applies to that delivery instead of the event (CONTRACT §13).
type Filter struct {
	Type, Status, ObjectID      string
	EndpointID                  string
	CreatedAfter, CreatedBefore *time.Time
}

// Query converts the filter to the store's query parameters.
func (f Filter) Query() store.EventFilter {
	return store.EventFilter{Type: f.Type, Status: f.Status, ObjectID: f.ObjectID, EndpointID: f.EndpointID,
		CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore}
}

// Event is an event with its deliveries and attempts.
type Event struct {
	models.Event
	// Attempts are every attempt of the event, oldest first, those recorded before it
	// had deliveries included.
	Attempts []models.DeliveryAttempt
	// Deliveries are the event's deliveries, oldest first.
	Deliveries []Delivery
}

// Delivery is one delivery of an event with its own attempts: those of Event.Attempts
// that name it, oldest first.
type Delivery struct {
	models.WebhookDelivery
	Attempts []models.DeliveryAttempt
}

// Unassigned are the event's attempts that belong to none of its deliveries: attempts
// of the single-endpoint releases, recorded before the event had deliveries.
func (e Event) Unassigned() []models.DeliveryAttempt {
	mine := make(map[string]bool, len(e.Deliveries))
	for _, d := range e.Deliveries {
		mine[d.ID] = true
	}
	var out []models.DeliveryAttempt
	for _, a := range e.Attempts {
		if !mine[a.DeliveryID] {
			out = append(out, a)
		}
	}
	return out
}

// Get reads one event of the environment (apperr.ErrNotFound: there is none).
func Get(ctx context.Context, st Store, env models.Env, id string) (Event, error) {
	e, err := st.Event(ctx, env, id)
	if err != nil {
		return Event{}, err
	}
	out, err := Of(ctx, st, env, []models.Event{e})
	if err != nil {
		return Event{}, err
	}
	return out[0], nil
}

// List reads a page of the environment's events matching f, newest first; more tells
// whether older ones follow.
func List(ctx context.Context, st Store, env models.Env, f Filter, page store.Page) ([]Event, bool, error) {
	rows, more, err := st.Events(ctx, env, f.Query(), page)
	if err != nil {
		return nil, false, err
	}
	out, err := Of(ctx, st, env, rows)
	return out, more, err
}

// Of completes event rows already read with their deliveries and attempts, in two
// queries whatever their number.
func Of(ctx context.Context, st Store, env models.Env, rows []models.Event) ([]Event, error) {
	ids := make([]string, len(rows))
	for i, e := range rows {
		ids[i] = e.ID
	}
	attempts, err := st.AttemptsOf(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	deliveries, err := st.DeliveriesOf(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(rows))
	for i, e := range rows {
		out[i] = assemble(e, attempts[e.ID], deliveries[e.ID])
	}
	return out, nil
}

// Assemble is an event read with its attempts and deliveries (oldest first), as Of
// assembles those it reads: a single-event replay reads its event back this way in its
// own transaction.
func Assemble(e models.Event, attempts []models.DeliveryAttempt, deliveries []models.WebhookDelivery) Event {
	return assemble(e, attempts, deliveries)
}

// assemble gives each delivery the attempts that name it.
func assemble(e models.Event, attempts []models.DeliveryAttempt, deliveries []models.WebhookDelivery) Event {
	out := Event{Event: e, Attempts: attempts, Deliveries: make([]Delivery, len(deliveries))}
	index := make(map[string]int, len(deliveries))
	for i, d := range deliveries {
		out.Deliveries[i] = Delivery{WebhookDelivery: d}
		index[d.ID] = i
	}
	for _, a := range attempts {
		if i, ok := index[a.DeliveryID]; ok {
			out.Deliveries[i].Attempts = append(out.Deliveries[i].Attempts, a)
		}
	}
	return out
}

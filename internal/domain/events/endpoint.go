package events

import (
	"context"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// EndpointStore is what ListTo needs of the database beside Store.
type EndpointStore interface {
	Store
	DeliveriesTo(ctx context.Context, env models.Env, endpointID, status string, page store.Page) ([]models.WebhookDelivery, bool, error)
	EventsByID(ctx context.Context, env models.Env, ids []string) ([]models.Event, error)
}

var _ EndpointStore = (*store.Store)(nil)

// ListTo reads a page of the events delivered to one endpoint (with status, those whose
// delivery to it is in that status), newest delivery first: the Deliveries page filtered
// by endpoint (CONTRACT §23), which pages by the endpoint's deliveries so that an index
// range gives each page (store.DeliveriesTo). The cursor is a delivery id: cursor is the
// last listed delivery's, for the next page; more tells whether older ones follow.
func ListTo(ctx context.Context, st EndpointStore, env models.Env, endpointID, status string, page store.Page) (list []Event, cursor string, more bool, err error) {
	deliveries, more, err := st.DeliveriesTo(ctx, env, endpointID, status, page)
	if err != nil || len(deliveries) == 0 {
		return nil, "", false, err
	}
	ids := make([]string, len(deliveries))
	for i, d := range deliveries {
		ids[i] = d.EventID
	}
	rows, err := st.EventsByID(ctx, env, ids)
	if err != nil {
		return nil, "", false, err
	}
	list, err = Of(ctx, st, env, rows)
	return list, deliveries[len(deliveries)-1].ID, more, err
}

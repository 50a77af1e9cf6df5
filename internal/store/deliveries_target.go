package store

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"gorm.io/gorm/schema"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// DeliveryTarget is what one attempt of a delivery needs.
type DeliveryTarget struct {
	Delivery models.WebhookDelivery
	Event    models.Event
	Env      Env
	Endpoint *models.WebhookEndpoint // nil: the endpoint was deleted
}

// DeliveryForAttempt loads a delivery, its event and its endpoint (nil when deleted) for
// an attempt of DeliverWebhook. The attempt sends nothing when the delivery is already
// delivered (a lost or late completion) or skipped (endpoint deleted), and ends the
// delivery failed with endpoint_disabled when the endpoint is disabled (CONTRACT §13).
// ErrNotFound: the delivery or its event is gone.
//
// It is one query, as it runs before every send: the endpoint is joined only from the
// event's environment (what scope would read), so a delivery never reaches another
// environment's endpoint.
func (s *Store) DeliveryForAttempt(ctx context.Context, deliveryID string) (DeliveryTarget, error) {
	var rows []attemptTargetRow
	if err := s.db.WithContext(ctx).Raw(attemptTargetSQL(), deliveryID).Scan(&rows).Error; err != nil {
		return DeliveryTarget{}, fmt.Errorf("delivery %s for attempt: %w", deliveryID, err)
	}
	if len(rows) == 0 {
		return DeliveryTarget{}, fmt.Errorf("delivery %s: %w", deliveryID, apperr.ErrNotFound)
	}
	r := rows[0]
	t := DeliveryTarget{Delivery: r.WebhookDelivery}
	if r.Event.ID == "" {
		return t, fmt.Errorf("event %s: %w", r.EventID, apperr.ErrNotFound)
	}
	t.Event, t.Env = r.Event, EnvOf(r.Event)
	if r.Endpoint.ID != "" {
		t.Endpoint = &r.Endpoint
	}
	return t, nil
}

// attemptTargetRow is one row of attemptTargetSQL: the event's and the endpoint's
// columns are prefixed, and empty (NULL) when the row is missing.
type attemptTargetRow struct {
	models.WebhookDelivery
	Event    models.Event           `gorm:"embedded;embeddedPrefix:ev_"`
	Endpoint models.WebhookEndpoint `gorm:"embedded;embeddedPrefix:ep_"`
}

// attemptTargetSQL reads a delivery with its event and endpoint. Its column lists come
// from the models, so a column added to one of them is read without touching this.
var attemptTargetSQL = sync.OnceValue(func() string {
	return "SELECT " + selectAs(&models.WebhookDelivery{}, "d", "") +
		", " + selectAs(&models.Event{}, "e", "ev_") +
		", " + selectAs(&models.WebhookEndpoint{}, "w", "ep_") + `
FROM webhook_deliveries d
LEFT JOIN events e ON e.id = d.event_id
LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.environment_id = e.environment_id
WHERE d.id = ?`
})

// selectAs lists every column of model as alias.column AS prefix+column (GORM's default
// naming, the store's).
func selectAs(model any, alias, prefix string) string {
	sch := modelSchema(model)
	cols := make([]string, len(sch.DBNames))
	for i, c := range sch.DBNames {
		cols[i] = alias + "." + c + " AS " + prefix + c
	}
	return strings.Join(cols, ", ")
}

// modelSchema is GORM's schema of a model under the store's naming. The models are fixed
// at build time: a failure is a bug.
func modelSchema(model any) *schema.Schema {
	sch, err := schema.Parse(model, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", model, err))
	}
	return sch
}

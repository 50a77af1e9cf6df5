package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/redact"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// PendingInput names the event whose pending deliveries the workflow asks for.
type PendingInput struct {
	EventID string
}

// PendingDeliveries lists the event's deliveries that are pending: all of them when its
// run starts, the replayed ones after a replay signal (CONTRACT §13), each with its
// endpoint's pace as it is now (§27).
func (a *Delivery) PendingDeliveries(ctx context.Context, in PendingInput) ([]models.PendingDelivery, error) {
	ds, err := a.Store.PendingDeliveries(ctx, in.EventID)
	if err != nil {
		return nil, fmt.Errorf("pending deliveries: %w", err)
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.EndpointID
	}
	paces, err := a.Store.EndpointPaces(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("pending deliveries: %w", err)
	}
	out := make([]models.PendingDelivery, len(ds))
	for i, d := range ds {
		out[i] = models.PendingDeliveryOf(d)
		out[i].Pace = paces[d.EndpointID] // CONTRACT §27: read as the series begins
	}
	return out, nil
}

// deliverOne is an attempt of one delivery of the fan-out. It sends nothing when the
// delivery is already delivered (a completion lost or late: check before send), skipped
// or its endpoint deleted; when the endpoint is disabled it records an attempt that was
// not sent and ends the delivery failed with endpoint_disabled, without retry.
func (a *Delivery) deliverOne(ctx context.Context, in DeliverInput) (*UnrecordedAttempt, error) {
	info := activity.GetInfo(ctx)
	log := activity.GetLogger(ctx)
	t, err := a.Store.DeliveryForAttempt(ctx, in.DeliveryID)
	if errors.Is(err, apperr.ErrNotFound) {
		return nil, temporal.NewNonRetryableApplicationError("delivery not found", ErrTypeDeliveryMissing, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("load delivery: %w", err)
	}
	switch {
	case t.Endpoint == nil || t.Delivery.Status == models.EventSkipped:
		log.Info("webhook endpoint deleted; delivery not sent", "event_id", t.Event.ID, "delivery_id", in.DeliveryID)
		return nil, nil
	case t.Delivery.Status == models.EventDelivered:
		log.Info("webhook already delivered; not sent again", "event_id", t.Event.ID, "delivery_id", in.DeliveryID, "attempt", info.Attempt)
		return nil, nil
	case !t.Endpoint.Enabled:
		return nil, a.endpointDisabled(ctx, t, in, info)
	}
	return a.send(ctx, t.Env, t.Event, *t.Endpoint, t.Delivery.RetryPolicy.Effective(a.RetryInterval), in, info)
}

// endpointDisabled records that the attempt fell due while its endpoint was disabled:
// nothing sent, the delivery failed with endpoint_disabled (replayable once the endpoint
// is back).
func (a *Delivery) endpointDisabled(ctx context.Context, t store.DeliveryTarget, in DeliverInput, info activity.Info) error {
	att := newAttempt(ctx, t.Event, in, info, a.now())
	att.EndpointID, att.URL, att.Method = t.Endpoint.ID, redact.URL(t.Endpoint.URL), t.Endpoint.Method
	att.Outcome, att.Error = models.AttemptSkipped, models.DeliveryEndpointDisabled
	describeAttempt(ctx, t.Event, &att)
	if err := a.recordUnsent(ctx, t.Env, t.Event.Type, &att, models.EventFailed); err != nil {
		return err
	}
	return temporal.NewNonRetryableApplicationError("webhook endpoint disabled", ErrTypeEndpointDisabled, nil)
}

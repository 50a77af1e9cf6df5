package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/platform/redact"
	"github.com/revops/revops/models"
)

// Time kept for an attempt's record (CONTRACT §10).
const (
	maxRecordReserve = time.Second // taken from the HTTP exchange's share of the attempt
	recordMargin     = time.Second // how far past the attempt's deadline the record may run
	recordBackoff    = 50 * time.Millisecond
	maxRecordBackoff = 400 * time.Millisecond
)

// recordReserve is the part of the attempt's remaining time kept for writing its
// record: maxRecordReserve, or a tenth of what is left when an attempt is short.
func recordReserve(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return maxRecordReserve
	}
	return max(0, min(maxRecordReserve, time.Until(d)/10))
}

// withReserve is ctx ending reserve before the attempt's deadline: the HTTP exchange's.
func withReserve(ctx context.Context, reserve time.Duration) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, d.Add(-reserve))
}

// record writes the attempt and the event's status with a context detached from the
// activity's (an attempt cut by its deadline is still recorded), and retries a failed
// write with a short backoff for at most reserve+recordMargin. The contract asks for
// this loop (CONTRACT §10): Temporal's retry would repeat the send, not just the write.
// The attempt keeps one id across tries, so a write that committed unseen is not doubled.
func (a *Delivery) record(ctx context.Context, env models.Env, att *models.DeliveryAttempt, status string, reserve time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reserve+recordMargin)
	defer cancel()
	if att.ID == "" {
		att.ID = uuid.NewString()
	}
	backoff := recordBackoff
	for tries := 1; ; tries++ {
		err := a.recorder().RecordAttempt(ctx, env, att, status)
		if err == nil {
			return nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("record attempt (%d tries): %w", tries, err)
		case <-t.C:
		}
		backoff = min(2*backoff, maxRecordBackoff)
	}
}

// MarkFailedInput names the delivery whose activity series ended without delivery.
type MarkFailedInput struct {
	EventID string
	// DeliveryID is the fan-out's delivery; "" in runs of the single-endpoint releases,
	// which mark the event's unfinished deliveries.
	DeliveryID string `json:",omitempty"`
	// Reason is the delivery's error when its last attempt could not say it
	// (endpoint_disabled); "" keeps the last attempt's.
	Reason string `json:",omitempty"`
	// Replays is the delivery's replay count as the series read it (models.PendingDelivery.Replays):
	// a delivery replayed since stays pending for its new series. nil (runs of earlier
	// releases): marked failed whatever happened since.
	Replays *int `json:",omitempty"`
}

// MarkDeliveryFailed ends the delivery failed unless it already has a final status or was
// replayed after its series read it (in.Replays), and has the webhook domain judge the
// automatic disabling of its endpoint (CONTRACT §13). The workflow runs it, under its own retry
// policy, once DeliverWebhook has finally failed: the last attempt's own record may have
// failed, and no delivery may stay retrying after its run closed.
func (a *Delivery) MarkDeliveryFailed(ctx context.Context, in MarkFailedInput) error {
	if in.DeliveryID == "" {
		return webhook.MarkEventFailed(ctx, a.Store, in.EventID)
	}
	disabled, err := webhook.MarkDeliveryFailed(ctx, a.Store, in.DeliveryID, in.Reason, in.Replays, a.DisableAfter)
	if errors.Is(err, apperr.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("delivery not found", ErrTypeDeliveryMissing, nil)
	}
	if err != nil {
		return fmt.Errorf("mark delivery failed: %w", err)
	}
	if disabled {
		metrics.EndpointDisabled()
		activity.GetLogger(ctx).Warn("webhook endpoint disabled: its attempts have failed for too long, or it answered 410 Gone",
			"event_id", in.EventID, "delivery_id", in.DeliveryID, "disable_after", a.DisableAfter)
	}
	return nil
}

// UnrecordedAttempt is a successful attempt whose record failed, carried in the
// workflow history to RecordDelivered: ids and figures only. The URL (its path and query
// may hold tokens) and the receiver's answer stay out of history; the record takes the
// endpoint's URL as configured when it is written.
type UnrecordedAttempt struct {
	ID         string // the id the failed writes used: one that committed unseen is not doubled
	Number     int
	Trigger    string
	Method     string
	StartedAt  time.Time
	DurationMS int64
	StatusCode int
	TraceID    string `json:",omitempty"` // the trace the attempt ran in
}

func unrecordedOf(att *models.DeliveryAttempt) *UnrecordedAttempt {
	return &UnrecordedAttempt{ID: att.ID, Number: att.Number, Trigger: att.Trigger, Method: att.Method,
		StartedAt: att.StartedAt, DurationMS: att.DurationMS, StatusCode: att.StatusCode, TraceID: att.TraceID}
}

// RecordDeliveredInput is a delivered event's attempt that DeliverWebhook could not record.
type RecordDeliveredInput struct {
	EventID    string
	DeliveryID string `json:",omitempty"` // "" in runs of the single-endpoint releases
	Attempt    UnrecordedAttempt
}

// RecordDelivered writes a successful attempt that DeliverWebhook could not record, and
// sets the event delivered. The workflow runs it under its own retries, so the record
// waits out a database outage instead of the send being repeated.
func (a *Delivery) RecordDelivered(ctx context.Context, in RecordDeliveredInput) error {
	ev, env, err := a.event(ctx, in.EventID) // one that is gone: nothing to record against
	if err != nil {
		return err
	}
	u := in.Attempt
	att := models.DeliveryAttempt{
		ID: u.ID, EventID: ev.ID, DeliveryID: in.DeliveryID, RunID: activity.GetInfo(ctx).WorkflowExecution.RunID, Number: u.Number,
		Trigger: u.Trigger, Method: u.Method, StartedAt: u.StartedAt, DurationMS: u.DurationMS,
		StatusCode: u.StatusCode, Outcome: models.AttemptSucceeded, TraceID: u.TraceID,
	}
	if ep, err := a.endpointOf(ctx, env, in.DeliveryID); err == nil {
		att.EndpointID, att.URL = ep.ID, redact.URL(ep.URL)
	}
	return a.recorder().RecordAttempt(ctx, env, &att, models.EventDelivered)
}

// endpointOf is the endpoint of a delivery, or the environment's oldest for "".
func (a *Delivery) endpointOf(ctx context.Context, env models.Env, deliveryID string) (models.WebhookEndpoint, error) {
	if deliveryID == "" {
		return a.Store.WebhookEndpoint(ctx, env)
	}
	t, err := a.Store.DeliveryForAttempt(ctx, deliveryID)
	if err != nil {
		return models.WebhookEndpoint{}, err
	}
	if t.Endpoint == nil {
		return models.WebhookEndpoint{}, apperr.ErrNotFound
	}
	return *t.Endpoint, nil
}

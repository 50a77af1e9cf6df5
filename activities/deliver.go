// Package activities holds the Temporal activities of Revops: methods on a struct that
// carries their dependencies, registered once by the worker.
package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/redact"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what the delivery activities need of the database.
type Store interface {
	EventByID(ctx context.Context, id string) (models.Event, models.Env, error)
	WebhookEndpoint(ctx context.Context, env models.Env) (models.WebhookEndpoint, error)
	DeliveredInRun(ctx context.Context, env models.Env, eventID, runID string) (bool, error)
	PendingDeliveries(ctx context.Context, eventID string) ([]models.WebhookDelivery, error)
	EndpointPaces(ctx context.Context, endpointIDs []string) (map[string]float64, error) // CONTRACT §27
	DeliveryForAttempt(ctx context.Context, deliveryID string) (store.DeliveryTarget, error)
	// FailureStore ends a delivery failed and judges its endpoint's disabling (webhook.MarkDeliveryFailed);
	// EventStore settles an event of the single-endpoint releases (webhook.MarkEventFailed).
	webhook.FailureStore
	webhook.EventStore
}

var _ Store = (*store.Store)(nil)

// Delivery holds the activities of a delivery: DeliverWebhook and the bookkeeping that
// settles it (the jobs, retention and the health check have structs of their own).
type Delivery struct {
	Store  Store
	Sender *webhook.Sender // HTTP client (SSRF-guarded, no redirects), ack sentence, timeout
	Now    func() time.Time
	// DisableAfter disables an endpoint whose attempts have all failed for this long
	// (REVOPS_WEBHOOK_DISABLE_AFTER; 0: never), judged when one of its deliveries fails.
	DisableAfter time.Duration
	// RetryInterval is REVOPS_WEBHOOK_RETRY_INTERVAL (0: the default policy's hour): the
	// default policy's interval when the server reports no retry policy (policyOf).
	RetryInterval time.Duration
	// FailingAfter: an endpoint whose attempts have all failed this long is failing
	// (REVOPS_WEBHOOK_FAILING_AFTER; 0: webhook.DefaultFailingAfter), judged at each record.
	FailingAfter time.Duration
	// Recorder writes each attempt's record; nil: webhook.Recorder over Store with
	// FailingAfter (tests put faults here).
	Recorder AttemptRecorder
}

// AttemptRecorder writes an attempt, its delivery's status and its endpoint's health in
// one transaction (webhook.Recorder).
type AttemptRecorder interface {
	RecordAttempt(ctx context.Context, env models.Env, a *models.DeliveryAttempt, status string) error
}

func (a *Delivery) recorder() AttemptRecorder {
	if a.Recorder != nil {
		return a.Recorder
	}
	return webhook.Recorder{Store: a.Store, FailingAfter: a.FailingAfter}
}

// DeliverInput names the delivery to make: ids only, never the body or a secret, since
// it is stored in the workflow history.
type DeliverInput struct {
	EventID string
	// DeliveryID is the delivery (one endpoint) of the fan-out; runs of the
	// single-endpoint releases have none and send to the environment's oldest endpoint.
	DeliveryID  string `json:",omitempty"`
	Trigger     string // models.TriggerScheduled or models.TriggerManual
	MaxAttempts int32  // the retry policy's, to know which attempt is the last
}

// Error types of the activity's application errors.
const (
	ErrTypeDeliveryFailed   = "delivery_failed"
	ErrTypeEventMissing     = "event_not_found"
	ErrTypeDeliveryMissing  = "delivery_not_found"
	ErrTypeEndpointDisabled = models.DeliveryEndpointDisabled
)

func (a *Delivery) now() time.Time {
	if a.Now != nil {
		return a.Now().UTC()
	}
	return time.Now().UTC()
}

// DeliverResult is what a successful attempt hands the workflow: nothing, unless its
// record could not be written.
type DeliverResult struct {
	// Unrecorded is a successful attempt whose record failed: the workflow records it
	// through RecordDelivered, under its own retries, instead of sending again.
	Unrecorded *UnrecordedAttempt `json:",omitempty"`
}

// DeliverWebhook makes one attempt of a delivery to its endpoint as configured now,
// signed with that endpoint's secrets, records it, and sets the delivery's status (and so
// the event's). Temporal's retry policy repeats it; a returned error is a short reason,
// without URL or secret. An attempt of a delivery already delivered (its completion was
// lost or late) sends nothing.
func (a *Delivery) DeliverWebhook(ctx context.Context, in DeliverInput) (DeliverResult, error) {
	var unrecorded *UnrecordedAttempt
	var err error
	if in.DeliveryID != "" {
		unrecorded, err = a.deliverOne(ctx, in)
	} else {
		unrecorded, err = a.deliverEvent(ctx, in)
	}
	return DeliverResult{Unrecorded: unrecorded}, err
}

// deliverEvent is an attempt of a run of the single-endpoint releases: the event goes to
// the environment's oldest endpoint, and the store records it on that delivery.
func (a *Delivery) deliverEvent(ctx context.Context, in DeliverInput) (*UnrecordedAttempt, error) {
	info := activity.GetInfo(ctx)
	log := activity.GetLogger(ctx)
	ev, env, err := a.event(ctx, in.EventID)
	if err != nil {
		return nil, err
	}
	done, err := a.Store.DeliveredInRun(ctx, env, ev.ID, info.WorkflowExecution.RunID)
	if err != nil {
		return nil, fmt.Errorf("check earlier attempts: %w", err)
	}
	if done {
		log.Info("webhook already delivered by this run; not sent again", "event_id", ev.ID, "attempt", info.Attempt)
		return nil, nil
	}
	ep, err := a.Store.WebhookEndpoint(ctx, env)
	if errors.Is(err, apperr.ErrNotFound) || (err == nil && !ep.Enabled) {
		return nil, a.skip(ctx, env, ev, in, info)
	}
	if err != nil {
		return nil, fmt.Errorf("load webhook endpoint: %w", err)
	}
	return a.send(ctx, env, ev, ep, models.DefaultRetryPolicy.Effective(a.RetryInterval), in, info)
}

// event loads the event of an attempt or record. One that is gone ends the activity's
// series: retrying would not bring it back.
func (a *Delivery) event(ctx context.Context, id string) (models.Event, models.Env, error) {
	ev, env, err := a.Store.EventByID(ctx, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return ev, env, temporal.NewNonRetryableApplicationError("event not found", ErrTypeEventMissing, nil)
	}
	if err != nil {
		return ev, env, fmt.Errorf("load event: %w", err)
	}
	return ev, env, nil
}

// send makes the HTTP exchange of an attempt to ep and records it. The exchange gets the
// attempt's remaining time less the record's reserve (CONTRACT §10). policy is the
// delivery's retry policy as the workflow runs it, for when the server reports none.
func (a *Delivery) send(ctx context.Context, env models.Env, ev models.Event, ep models.WebhookEndpoint, policy models.RetryPolicy, in DeliverInput, info activity.Info) (*UnrecordedAttempt, error) {
	log := activity.GetLogger(ctx)
	reserve := recordReserve(ctx)
	sendCtx, cancel := withReserve(ctx, reserve)
	now := a.now()
	res := a.Sender.Send(sendCtx, webhook.Message{
		URL: ep.URL, Method: ep.Method, ID: ev.ID, Body: []byte(ev.Payload),
		Secrets: webhook.SigningSecrets(ep, now), At: now, Headers: ep.Headers, // read from the database, never the history
	})
	cancel()
	att := newAttempt(ctx, ev, in, info, now)
	att.EndpointID = ep.ID
	status := judge(&att, ep, res, info.Attempt >= maxAttempts(in, info))
	delay := a.nextRetryDelay(res, policy, info)
	att.RetryDelayMS = delay.Milliseconds()
	log.Info("webhook attempt", "event_id", ev.ID, "delivery_id", in.DeliveryID, "attempt", info.Attempt,
		"status_code", res.StatusCode, "outcome", att.Outcome, "reason", res.Reason, "next_retry_delay", delay)
	observe(ev.Type, &att, status)
	describeAttempt(ctx, ev, &att)
	var unrecorded *UnrecordedAttempt
	if err := a.record(ctx, env, &att, status, reserve); err != nil {
		// The send is never repeated for its record: a successful one ends the attempt
		// successfully and hands its record to the workflow; a failed one is retried as
		// the failure it was (the workflow marks the event failed after the last).
		log.Error("webhook attempt not recorded", "event_id", ev.ID, "attempt", info.Attempt,
			"status_code", res.StatusCode, "outcome", att.Outcome, "status", status, "err", err)
		if res.OK() {
			unrecorded = unrecordedOf(&att)
		}
	}
	if res.OK() {
		return unrecorded, nil
	}
	return nil, failure(res, delay)
}

// describeAttempt names the attempt on its span (the Temporal interceptor's, when tracing
// is on): event, endpoint, attempt and status code (CONTRACT §19), never its URL.
func describeAttempt(ctx context.Context, ev models.Event, att *models.DeliveryAttempt) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("revops.event_id", ev.ID), attribute.String("revops.event_type", ev.Type),
		attribute.String("revops.endpoint_id", att.EndpointID), attribute.String("revops.delivery_id", att.DeliveryID),
		attribute.Int("revops.attempt", att.Number), attribute.String("revops.outcome", att.Outcome))
	if att.StatusCode != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", att.StatusCode))
	}
}

// skip records that no enabled endpoint was there when the attempt was due.
func (a *Delivery) skip(ctx context.Context, env models.Env, ev models.Event, in DeliverInput, info activity.Info) error {
	att := newAttempt(ctx, ev, in, info, a.now())
	att.Outcome, att.Error = models.AttemptSkipped, "no enabled webhook endpoint"
	describeAttempt(ctx, ev, &att)
	return a.recordUnsent(ctx, env, ev.Type, &att, models.EventSkipped)
}

// recordUnsent records an attempt that sent nothing (no enabled endpoint, endpoint
// disabled) with the status it leaves, then feeds the metrics. Nothing was sent, so a
// failed record fails the attempt and Temporal retries it.
func (a *Delivery) recordUnsent(ctx context.Context, env models.Env, eventType string, att *models.DeliveryAttempt, status string) error {
	if err := a.record(ctx, env, att, status, recordReserve(ctx)); err != nil {
		return err
	}
	observe(eventType, att, status)
	return nil
}

// judge fills the attempt's record from the sender's result and returns the event's
// status after it.
func judge(att *models.DeliveryAttempt, ep models.WebhookEndpoint, res webhook.Result, last bool) string {
	att.URL, att.Method = redact.URL(ep.URL), ep.Method
	att.DurationMS, att.StatusCode = res.Duration.Milliseconds(), res.StatusCode
	att.ResponseExcerpt, att.Error, att.Outcome = res.Excerpt, res.Reason, models.AttemptSucceeded
	switch {
	case res.OK():
		return models.EventDelivered
	case res.Gone():
		att.Outcome, att.Error = models.AttemptFailed, models.DeliveryGone // the delivery's last_error too
		return models.EventFailed
	case res.Permanent || last:
		att.Outcome = models.AttemptFailed
		return models.EventFailed
	default:
		att.Outcome = models.AttemptFailed
		return models.EventRetrying
	}
}

func newAttempt(ctx context.Context, ev models.Event, in DeliverInput, info activity.Info, now time.Time) models.DeliveryAttempt {
	trigger := in.Trigger
	if trigger == "" {
		trigger = models.TriggerScheduled
	}
	return models.DeliveryAttempt{
		EventID: ev.ID, DeliveryID: in.DeliveryID, RunID: info.WorkflowExecution.RunID, Number: int(info.Attempt),
		Trigger: trigger, StartedAt: now, TraceID: tracing.SpanTraceID(ctx),
	}
}

// maxAttempts is the input's figure, else the retry policy the server reports.
func maxAttempts(in DeliverInput, info activity.Info) int32 {
	if in.MaxAttempts > 0 {
		return in.MaxAttempts
	}
	if info.RetryPolicy != nil && info.RetryPolicy.MaximumAttempts > 0 {
		return info.RetryPolicy.MaximumAttempts
	}
	return 1
}

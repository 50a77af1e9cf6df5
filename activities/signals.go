package activities

import (
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// Receivers' own signals (CONTRACT §23, as the Standard Webhooks specification
// recommends): a 410 Gone ends the delivery and disables its endpoint; a 429 or 503 whose
// Retry-After is longer than the policy's next wait puts the next attempt at that time.

// ErrTypeGone is the type of the error of an attempt answered 410 Gone: not retried; the
// workflow's MarkDeliveryFailed then finds the delivery failed with error gone and
// disables its endpoint (webhook.MarkDeliveryFailed).
const ErrTypeGone = models.DeliveryGone

// failure is the error a failed attempt ends the activity with: non-retryable for a 410
// or a permanent fault; otherwise retryable, with Temporal's NextRetryDelay when the
// receiver asked for a longer wait than the policy's (delay, from nextRetryDelay).
func failure(res webhook.Result, delay time.Duration) error {
	switch {
	case res.Gone():
		return temporal.NewNonRetryableApplicationError(models.DeliveryGone, ErrTypeGone, nil)
	case res.Permanent:
		return temporal.NewNonRetryableApplicationError(res.Reason, res.Reason, nil)
	case delay <= 0:
		return temporal.NewApplicationError(res.Reason, ErrTypeDeliveryFailed)
	}
	return temporal.NewApplicationErrorWithOptions(res.Reason, ErrTypeDeliveryFailed,
		temporal.ApplicationErrorOptions{NextRetryDelay: delay})
}

// nextRetryDelay is the wait before the next attempt that the receiver's answer sets
// (retryDelay), 0 when the policy's stands: after a success, a 410 or a permanent fault
// (no next attempt) too.
func (a *Delivery) nextRetryDelay(res webhook.Result, policy models.RetryPolicy, info activity.Info) time.Duration {
	if res.OK() || res.Gone() || res.Permanent || res.RetryAfter <= 0 {
		return 0
	}
	first := info.ScheduledTime // when the workflow scheduled the series: its first attempt
	if first.IsZero() {
		first = a.now() // unknown: the bound counts from now
	}
	return retryDelay(policyOf(info, policy), int(info.Attempt), res.RetryAfter, first, a.now())
}

// retryDelay is the NextRetryDelay after attempt n failed with a receiver asking to wait
// asked: asked, when it is longer than the policy's wait after n, shortened so that the
// attempts left after the delayed one still fit, at the policy's waits, within
// webhook.MaxRetrySchedule of the first attempt (the bound of every schedule, CONTRACT
// §13). 0 (the policy's wait) otherwise: nothing asked, a shorter wait, the last attempt
// (nothing follows), or no room left for a longer wait.
func retryDelay(p models.RetryPolicy, n int, asked time.Duration, first, now time.Time) time.Duration {
	if asked <= 0 || n < 1 || n >= p.MaximumAttempts {
		return 0
	}
	var rest time.Duration // the policy's waits between the delayed attempt and the last
	for k := n + 1; k < p.MaximumAttempts; k++ {
		rest += p.Wait(k)
	}
	d := min(asked, first.Add(webhook.MaxRetrySchedule-rest).Sub(now))
	if d <= p.Wait(n) {
		return 0
	}
	return d
}

// policyOf is the retry policy the attempt runs under: the one the server reports, else
// (the SDK's test environment reports none) the delivery's copy as the workflow runs it
// (models.RetryPolicy.Effective).
func policyOf(info activity.Info, copied models.RetryPolicy) models.RetryPolicy {
	rp := info.RetryPolicy
	if rp == nil || rp.InitialInterval <= 0 {
		return copied
	}
	p := models.RetryPolicy{
		InitialIntervalMS: rp.InitialInterval.Milliseconds(), BackoffCoefficient: rp.BackoffCoefficient,
		MaximumIntervalMS: rp.MaximumInterval.Milliseconds(), MaximumAttempts: int(rp.MaximumAttempts),
	}
	if p.BackoffCoefficient < 1 {
		p.BackoffCoefficient = 2 // Temporal's default
	}
	if p.MaximumIntervalMS <= 0 {
		p.MaximumIntervalMS = 100 * p.InitialIntervalMS // Temporal's default
	}
	if p.MaximumAttempts <= 0 {
		p.MaximumAttempts = copied.MaximumAttempts // unlimited: the delivery's bound
	}
	return p
}

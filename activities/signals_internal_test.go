package activities

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// A receiver's Retry-After delays the next attempt only when it is longer than the
// policy's wait, never past the 7-day bound of the whole schedule, never after the last
// attempt (CONTRACT §23).
func TestRetryDelay(t *testing.T) {
	hourly := models.DefaultRetryPolicy // 6 attempts, 1 h apart
	backoff := models.RetryPolicy{InitialIntervalMS: time.Minute.Milliseconds(), BackoffCoefficient: 2,
		MaximumIntervalMS: time.Hour.Milliseconds(), MaximumAttempts: 10}
	atBound := models.RetryPolicy{InitialIntervalMS: (24 * time.Hour).Milliseconds(), BackoffCoefficient: 1,
		MaximumIntervalMS: (24 * time.Hour).Milliseconds(), MaximumAttempts: 8} // 7 × 24 h: the whole bound
	first := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	week := webhook.MaxRetrySchedule
	tests := []struct {
		name  string
		p     models.RetryPolicy
		n     int
		asked time.Duration
		now   time.Time
		want  time.Duration
	}{
		{"none asked", hourly, 1, 0, first, 0},
		{"shorter than the policy's wait", hourly, 1, 30 * time.Minute, first, 0},
		{"equal to it", hourly, 1, time.Hour, first, 0},
		{"longer", hourly, 1, 3 * time.Hour, first, 3 * time.Hour},
		{"longer, later attempt", hourly, 3, 2 * time.Hour, first.Add(2 * time.Hour), 2 * time.Hour},
		{"the last attempt", hourly, 6, 3 * time.Hour, first.Add(5 * time.Hour), 0},
		// Attempt 2 of 6 at first+1h asks 30 days: the 3 waits after the delayed attempt
		// (3 h) must still end within 7 days of the first.
		{"past the bound: cut", hourly, 2, 30 * 24 * time.Hour, first.Add(time.Hour), week - 3*time.Hour - time.Hour},
		{"backoff: the wait grows", backoff, 4, 5 * time.Minute, first, 0}, // wait after 4: 8 min
		{"backoff: longer than it", backoff, 4, 9 * time.Minute, first, 9 * time.Minute},
		{"a schedule at the bound has no room", atBound, 1, 48 * time.Hour, first, 0},
		{"no room left late in the week", hourly, 2, 10 * time.Hour, first.Add(week - 4*time.Hour), 0},
	}
	for _, tt := range tests {
		if got := retryDelay(tt.p, tt.n, tt.asked, first, tt.now); got != tt.want {
			t.Errorf("%s: retryDelay(attempt %d, asked %v) = %v, want %v", tt.name, tt.n, tt.asked, got, tt.want)
		}
	}
}

// The attempt's error carries the delay as Temporal's NextRetryDelay; a 410 is not retried.
func TestFailureCarriesTheReceiversSignal(t *testing.T) {
	a := &Delivery{Now: func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }}
	info := activity.Info{Attempt: 1, ScheduledTime: a.Now()}
	var appErr *temporal.ApplicationError
	attempt := func(res webhook.Result) (time.Duration, error) {
		d := a.nextRetryDelay(res, models.DefaultRetryPolicy, info)
		return d, failure(res, d)
	}

	d, err := attempt(webhook.Result{StatusCode: 429, Reason: "status 429", RetryAfter: 2 * time.Hour})
	if !errors.As(err, &appErr) || appErr.NonRetryable() || appErr.NextRetryDelay() != 2*time.Hour || d != 2*time.Hour || appErr.Type() != ErrTypeDeliveryFailed {
		t.Fatalf("429 Retry-After 2h: %v (delay %v)", err, d)
	}
	d, err = attempt(webhook.Result{StatusCode: 429, Reason: "status 429", RetryAfter: time.Minute})
	if !errors.As(err, &appErr) || appErr.NextRetryDelay() != 0 || d != 0 {
		t.Fatalf("429 Retry-After 1m: %v (delay %v), want the policy's", err, d)
	}
	d, err = attempt(webhook.Result{StatusCode: 410, Reason: "status 410"})
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != ErrTypeGone || d != 0 {
		t.Fatalf("410: %v, want non-retryable %s", err, ErrTypeGone)
	}
}

// The server's policy wins over the delivery's copy; Temporal's defaults fill its gaps.
func TestPolicyOf(t *testing.T) {
	copied := models.DefaultRetryPolicy
	if got := policyOf(activity.Info{}, copied); got != copied {
		t.Fatalf("no server policy: %+v, want the copy", got)
	}
	got := policyOf(activity.Info{RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3}}, copied)
	want := models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 2, MaximumIntervalMS: 100000, MaximumAttempts: 3}
	if got != want {
		t.Fatalf("server policy: %+v, want %+v", got, want)
	}
}

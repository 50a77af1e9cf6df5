package dashboard

import (
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/models"
)

// TestNextAttempt: the estimate follows the delivery's own policy (backoff, cap), and the
// default policy runs at the configured interval, as the workflow does.
func TestNextAttempt(t *testing.T) {
	h := &handler{cfg: config.Config{WebhookRetryInterval: 5 * time.Second}}
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	backoff := models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 2, MaximumIntervalMS: 10_000, MaximumAttempts: 10}
	for _, tc := range []struct {
		name    string
		policy  models.RetryPolicy
		n       int
		ms      int64
		delayMS int64         // a receiver's Retry-After (CONTRACT §23)
		want    time.Duration // after start
	}{
		{"default policy at the configured interval", models.DefaultRetryPolicy, 3, 200, 0, 5200 * time.Millisecond},
		{"after the first attempt", backoff, 1, 0, 0, time.Second},
		{"doubled twice", backoff, 3, 500, 0, 4500 * time.Millisecond},
		{"capped", backoff, 9, 0, 0, 10 * time.Second},
		{"constant", models.RetryPolicy{InitialIntervalMS: 30_000, BackoffCoefficient: 1, MaximumIntervalMS: 30_000, MaximumAttempts: 3}, 2, 0, 0, 30 * time.Second},
		{"a receiver's Retry-After", models.DefaultRetryPolicy, 1, 200, 3_600_000, time.Hour + 200*time.Millisecond},
	} {
		last := models.DeliveryAttempt{StartedAt: start, DurationMS: tc.ms, Number: tc.n, RetryDelayMS: tc.delayMS}
		if got := h.nextAttempt(tc.policy, last).Sub(start); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

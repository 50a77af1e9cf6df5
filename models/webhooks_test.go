package models_test

import (
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// The schedule is the sum of the waits between attempts: each the previous one times
// the coefficient, capped at the maximum interval.
func TestSchedule(t *testing.T) {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	for _, tc := range []struct {
		name string
		p    models.RetryPolicy
		want time.Duration
	}{
		{"the default: 5 waits of 1h", models.DefaultRetryPolicy, 5 * time.Hour},
		{"one attempt, no wait", models.RetryPolicy{InitialIntervalMS: ms(time.Hour), BackoffCoefficient: 1, MaximumIntervalMS: ms(time.Hour), MaximumAttempts: 1}, 0},
		{"doubling 1s,2s,4s", models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 2, MaximumIntervalMS: ms(time.Hour), MaximumAttempts: 4}, 7 * time.Second},
		{"capped 1s,2s,3s,3s", models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 2, MaximumIntervalMS: 3000, MaximumAttempts: 5}, 9 * time.Second},
		{"the widest: 19 waits of 24h", models.RetryPolicy{InitialIntervalMS: ms(24 * time.Hour), BackoffCoefficient: 10, MaximumIntervalMS: ms(24 * time.Hour), MaximumAttempts: 20}, 19 * 24 * time.Hour},
	} {
		if got := tc.p.Schedule(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Each wait is the previous one times the coefficient, capped at the maximum interval;
// Effective puts the configured interval on the default policy only.
func TestWaitAndEffective(t *testing.T) {
	p := models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 2, MaximumIntervalMS: 5000, MaximumAttempts: 6}
	for n, want := range []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if n > 0 && p.Wait(n) != want {
			t.Errorf("Wait(%d) = %v, want %v", n, p.Wait(n), want)
		}
	}
	if got := p.Effective(time.Second); got != p {
		t.Errorf("own policy became %+v", got)
	}
	if got := models.DefaultRetryPolicy.Effective(2 * time.Second); got.Wait(3) != 2*time.Second || got.MaximumAttempts != 6 {
		t.Errorf("default policy at 2s = %+v", got)
	}
	if got := (models.RetryPolicy{}).Effective(0); got != models.DefaultRetryPolicy {
		t.Errorf("no policy = %+v, want the default", got)
	}
}

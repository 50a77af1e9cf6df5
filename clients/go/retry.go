package revops

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// retryWait decides after each attempt whether to try again and how long to wait first.
// Retried: network errors, 429 (after Retry-After), 409 idempotency_key_in_use (the first
// attempt with this key is still running) and 5xx. Every method is retried, GET included:
// the others carry one Idempotency-Key, so the server does their change at most once.
func (c *Client) retryWait(ctx context.Context, attempt int, res *response, err error) (time.Duration, bool) {
	if attempt >= c.maxRetries || ctx.Err() != nil {
		return 0, false
	}
	backoff := c.backoff(attempt)
	switch {
	case err != nil:
		return backoff, true
	case res.status == http.StatusTooManyRequests, res.status >= 500:
		after, ok := retryAfter(res.header, time.Now())
		if ok && after > MaxRetryAfter {
			return 0, false // the caller decides whether to wait that long
		}
		return max(after, backoff), true
	case res.status == http.StatusConflict && errorCode(res.body) == "idempotency_key_in_use":
		return backoff, true
	}
	return 0, false
}

// backoff is the wait before retry number attempt+1: initial × 2^attempt, capped, with
// "equal jitter" (half fixed, half random) so that clients that failed together do not
// retry together.
func (c *Client) backoff(attempt int) time.Duration {
	// Double while under the cap; shifting first could overflow into a negative wait.
	d := max(c.initialBackoff, 1)
	for range attempt {
		if d >= c.maxBackoff/2 {
			d = c.maxBackoff
			break
		}
		d *= 2
	}
	d = min(d, c.maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads Retry-After: delay-seconds, or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

func errorCode(body []byte) string {
	var env errorEnvelope
	if json.Unmarshal(body, &env) != nil {
		return ""
	}
	return env.Error.Code
}

// sleep waits d, or less if ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

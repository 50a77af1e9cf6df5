package revops

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestRetriesReuseTheIdempotencyKeyAndBody(t *testing.T) {
	rec, c := newRecorder(t,
		status(503, `{"error":{"type":"api_error","code":"unavailable","message":"m","request_id":"r"}}`),
		apiError(409, "idempotency_key_in_use"),
		status(502, `<html>bad gateway</html>`),
		status(201, accountJSON),
	)
	if _, err := c.CreateAccount(context.Background(), &AccountCreate{Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d attempts, want 4", len(reqs))
	}
	key := reqs[0].Header.Get("Idempotency-Key")
	for i, r := range reqs {
		if r.Header.Get("Idempotency-Key") != key || rec.bodies[i] != rec.bodies[0] {
			t.Errorf("attempt %d: key %q body %s; first: key %q body %s", i+1, r.Header.Get("Idempotency-Key"), rec.bodies[i], key, rec.bodies[0])
		}
	}
}

func TestTheCallersIdempotencyKey(t *testing.T) {
	rec, c := newRecorder(t, status(200, accountJSON), status(200, accountJSON))
	ctx := context.Background()
	if _, err := c.ActivateAccount(ctx, "a1", WithIdempotencyKey("mine-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ActivateAccount(ContextWithIdempotencyKey(ctx, "mine-2"), "a1"); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if reqs[0].Header.Get("Idempotency-Key") != "mine-1" || reqs[1].Header.Get("Idempotency-Key") != "mine-2" {
		t.Fatalf("keys %q, %q", reqs[0].Header.Get("Idempotency-Key"), reqs[1].Header.Get("Idempotency-Key"))
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	rec, c := newRecorder(t,
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			apiError(429, "rate_limited")(w, r)
		},
		status(200, `{"object":"api_key","environment":"sandbox","type":"secret","organization":{"id":"o","name":"O"}}`),
	)
	start := time.Now()
	who, err := c.WhoAmI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("retried after %v, before Retry-After's 1s", waited)
	}
	if len(rec.requests()) != 2 || who.Environment != EnvironmentSandbox {
		t.Fatalf("%d attempts, %+v", len(rec.requests()), who)
	}
}

func TestARetryAfterBeyondTheCapIsReturned(t *testing.T) {
	_, c := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		apiError(429, "rate_limited")(w, r)
	})
	var apiErr *Error
	if _, err := c.WhoAmI(context.Background()); !errors.As(err, &apiErr) || apiErr.Status != 429 {
		t.Fatalf("got %v", err)
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	for _, answer := range []func(http.ResponseWriter, *http.Request){
		apiError(400, "parameter_invalid"),
		apiError(404, "resource_missing"),
		apiError(409, "invalid_state_transition"),
		apiError(409, "idempotency_key_reused"),
	} {
		rec, c := newRecorder(t, answer)
		_, err := c.SubmitDeal(context.Background(), "d1")
		var apiErr *Error
		if !errors.As(err, &apiErr) || len(rec.requests()) != 1 {
			t.Errorf("%v after %d attempts", err, len(rec.requests()))
		}
	}
}

func TestRetriesStopAtMaxRetries(t *testing.T) {
	answers := make([]func(http.ResponseWriter, *http.Request), 3)
	for i := range answers {
		answers[i] = status(500, `{}`)
	}
	rec, c := newRecorder(t, answers...)
	c.maxRetries = 2
	var apiErr *Error
	if _, err := c.GetDeal(context.Background(), "d1"); !errors.As(err, &apiErr) || apiErr.Status != 500 {
		t.Fatalf("got %v", err)
	}
	if n := len(rec.requests()); n != 3 {
		t.Fatalf("%d attempts, want 3 (1 + 2 retries)", n)
	}
}

func TestNetworkErrorsAreRetried(t *testing.T) {
	rec, c := newRecorder(t,
		func(w http.ResponseWriter, r *http.Request) { // the connection drops mid-answer
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			_ = conn.Close()
		},
		status(200, `{"object":"api_key","environment":"live","type":"public","organization":{"id":"o","name":"O"}}`),
	)
	if _, err := c.WhoAmI(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.requests()) != 2 {
		t.Fatalf("%d attempts", len(rec.requests()))
	}
}

func TestTheContextEndsTheWait(t *testing.T) {
	_, c := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		apiError(429, "rate_limited")(w, r)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.WhoAmI(ctx)
	// Ended during the wait, the call returns the context's error with the 429 it was
	// waiting on. A wait that outlived the context would instead send the retry with the
	// expired context and return that network error, without the 429.
	var apiErr *Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &apiErr) || apiErr.Status != 429 {
		t.Fatalf("got %v", err)
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	c := &Client{initialBackoff: 100 * time.Millisecond, maxBackoff: time.Second}
	for attempt, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		for range 20 {
			if d := c.backoff(attempt); d < want/2 || d > want {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
}

// However large the settings, the wait stays within the cap and never turns negative
// (a shift past 63 bits would).
func TestBackoffNeverOverflows(t *testing.T) {
	c := &Client{initialBackoff: 20 * time.Second, maxBackoff: time.Minute}
	for attempt := range 100 {
		if d := c.backoff(attempt); d < 10*time.Second || d > time.Minute {
			t.Fatalf("attempt %d: %v", attempt, d)
		}
	}
}

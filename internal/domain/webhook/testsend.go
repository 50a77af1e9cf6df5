package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/models"
)

// TestResult is the outcome of a manual test.
type TestResult struct {
	OK              bool
	StatusCode      int
	DurationMS      int64
	ResponseExcerpt string
	Error           string
}

// checkTestType: a type of the seed (the §8 test body has no operational shape).
func checkTestType(eventType string) error {
	var fs apperr.Faults
	if eventType == "" {
		fs.Missing("type")
	} else if textcheck.LineOK(&fs, "type", eventType) && !KnownType(eventType) {
		fs.Invalid("type", "type must be one of %v.", EventTypes)
	}
	return fs.Err()
}

// testClaimMargin is how long a test's claim outlives its attempt's timeout: a process
// that died mid-send frees its endpoint this long after the send would have ended.
const testClaimMargin = 15 * time.Second

// releaseBound bounds the release of a test's claim, done even when the request's
// context has ended (the claim would lapse by itself anyway).
const releaseBound = 5 * time.Second

// claimedSend sends a test to the endpoint id under its test claim (CONTRACT §17: one
// test at a time per endpoint, across replicas: the database holds the claim), and
// releases the claim once the send has answered. A test under way → a ConflictError
// test_in_progress (store.ErrTestInProgress).
func (e *Endpoints) claimedSend(ctx context.Context, env models.Env, id, eventType string) (TestResult, error) {
	ep, token, err := e.Store.ClaimEndpointTest(ctx, env, id, time.Now().UTC(), e.Sender.timeout()+testClaimMargin)
	if err != nil {
		return TestResult{}, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseBound)
		defer cancel()
		// A claim not released lapses after the timeout and margin: the test's answer
		// stands either way.
		_ = e.Store.ReleaseEndpointTest(rctx, env, id, token)
	}()
	return e.send(ctx, ep, eventType)
}

// send sends the test body of eventType to ep now, enabled or not, signed like any
// delivery.
func (e *Endpoints) send(ctx context.Context, ep models.WebhookEndpoint, eventType string) (TestResult, error) {
	body, err := TestBody(eventType)
	if err != nil {
		return TestResult{}, fmt.Errorf("test body: %w", err)
	}
	now := time.Now().UTC()
	res := e.Sender.Send(ctx, Message{
		URL: ep.URL, Method: ep.Method, ID: uuid.NewString(), Body: body, Secrets: SigningSecrets(ep, now), At: now,
		Headers: ep.Headers,
	})
	return TestResult{OK: res.OK(), StatusCode: res.StatusCode, DurationMS: res.Duration.Milliseconds(),
		ResponseExcerpt: res.Excerpt, Error: res.Reason}, nil
}

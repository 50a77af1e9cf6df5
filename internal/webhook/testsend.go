package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/textcheck"
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
	})
	return TestResult{OK: res.OK(), StatusCode: res.StatusCode, DurationMS: res.Duration.Milliseconds(),
		ResponseExcerpt: res.Excerpt, Error: res.Reason}, nil
}

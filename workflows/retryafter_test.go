package workflows

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// retryAfterStore is the database as the real DeliverWebhook sees it for one delivery:
// it finds the delivery and keeps the attempts' start times (workflow time). Nothing else
// is called on the path under test (the embedded nil interface would panic).
type retryAfterStore struct {
	activities.Store
	target store.DeliveryTarget
	mu     sync.Mutex
	starts []time.Time
}

func (s *retryAfterStore) DeliveryForAttempt(context.Context, string) (store.DeliveryTarget, error) {
	return s.target, nil
}

// RecordAttempt is the activity's record (activities.AttemptRecorder).
func (s *retryAfterStore) RecordAttempt(_ context.Context, _ models.Env, a *models.DeliveryAttempt, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starts = append(s.starts, a.StartedAt)
	return nil
}

// A receiver that answers the first attempt 429 with a Retry-After longer than the
// policy's hour gets the second attempt at that time, never sooner; a shorter or unusable
// one leaves the policy's hour (CONTRACT §23). The real activity and sender run under the
// test suite's clock, against an HTTPS receiver.
func TestRetryAfterDelaysTheNextAttempt(t *testing.T) {
	tests := []struct {
		status     int
		retryAfter string
		gap        time.Duration
	}{
		{http.StatusTooManyRequests, "10800", 3 * time.Hour},
		{http.StatusServiceUnavailable, "7200", 2 * time.Hour},
		{http.StatusTooManyRequests, "1800", time.Hour},       // shorter: the policy's
		{http.StatusTooManyRequests, "in a while", time.Hour}, // unusable: the policy's
		{http.StatusInternalServerError, "10800", time.Hour},  // not a 429 or 503
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status)+" "+tt.retryAfter, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			rc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if calls++; calls == 1 {
					w.Header().Set("Retry-After", tt.retryAfter)
					w.WriteHeader(tt.status)
					return
				}
				_, _ = w.Write([]byte("ok"))
			}))
			t.Cleanup(rc.Close)

			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			d := &fakeDelivery{id: "A", policy: models.DefaultRetryPolicy}
			st := &retryAfterStore{target: store.DeliveryTarget{
				Delivery: models.WebhookDelivery{ID: d.id, EventID: input().EventID, Status: models.EventPending, RetryPolicy: d.policy},
				Event:    models.Event{ID: input().EventID, Type: "deal-signed", Payload: `{}`},
				Endpoint: &models.WebhookEndpoint{ID: "ep-A", URL: rc.URL, Method: http.MethodPost, Enabled: true, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
			}}
			Register(env, &activities.Delivery{Store: st, Recorder: st, Now: env.Now,
				Sender: &webhook.Sender{Client: rc.Client(), AckSentence: "ok", Timeout: 5 * time.Second}})

			env.ExecuteWorkflow(WebhookDelivery, inputWith(d))
			if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
				t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
			}
			if len(st.starts) != 2 {
				t.Fatalf("%d attempts, want 2", len(st.starts))
			}
			if got := st.starts[1].Sub(st.starts[0]); got != tt.gap {
				t.Fatalf("second attempt %v after the first, want %v", got, tt.gap)
			}
		})
	}
}

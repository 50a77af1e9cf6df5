package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// faultyStore fails the attempts' records for the attempts `fail` picks (CONTRACT §10 faults).
type faultyStore struct {
	*store.Store
	mu      sync.Mutex
	fail    func(a *models.DeliveryAttempt) bool
	hold    func(deliveryID string) error // once, after a MarkDeliveryFailed
	marking string                        // the delivery of the last MarkDeliveryFailed
}

// RecordAttempt is the activity's record (activities.AttemptRecorder), through the real
// store.
func (f *faultyStore) RecordAttempt(ctx context.Context, env models.Env, a *models.DeliveryAttempt, status string) error {
	f.mu.Lock()
	fail := f.fail != nil && f.fail(a)
	f.mu.Unlock()
	if fail {
		return errors.New("database unreachable")
	}
	return webhook.Recorder{Store: f.Store}.RecordAttempt(ctx, env, a, status)
}

// DeliveryEnv notes the delivery the activity's MarkDeliveryFailed is about to mark
// (webhook.MarkDeliveryFailed reads its environment first), for InTx.
func (f *faultyStore) DeliveryEnv(ctx context.Context, deliveryID string) (models.Env, error) {
	f.mu.Lock()
	f.marking = deliveryID
	f.mu.Unlock()
	return f.Store.DeliveryEnv(ctx, deliveryID)
}

// InTx runs the real transaction (the activities write in one only to mark a delivery
// failed), then, when hold is set, hands the marked delivery's id to hold and returns
// its error: the mark committed but its activity was lost, as when its worker dies (the
// activity is retried).
func (f *faultyStore) InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error) {
	events, err := f.Store.InTx(ctx, env, fn)
	f.mu.Lock()
	hold, id := f.hold, f.marking
	f.hold = nil
	f.mu.Unlock()
	if err == nil && hold != nil {
		return events, hold(id)
	}
	return events, err
}

// holdNextMark makes the next MarkDeliveryFailed call hold (see InTx).
func (f *faultyStore) holdNextMark(hold func(deliveryID string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = hold
}

func (f *faultyStore) set(fail func(a *models.DeliveryAttempt) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// Hostile receivers and database faults through the real stack (Temporal, worker,
// PostgreSQL, HTTPS): every attempt is recorded as what it was, a successful send is
// never repeated, and the event ends with the status its run ended with (CONTRACT §10, §15).
func TestDeliveryRecordedAsItHappened(t *testing.T) {
	s := newStack(t)
	faults := &faultyStore{Store: s.db.Store}
	s.acts.Store, s.acts.Recorder = faults, faults
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	st := s.starter(c)
	ctx := context.Background()

	type want struct {
		status   string
		requests int
		attempts int    // recorded
		outcome  string // of the last recorded attempt
		excerpt  string // of the last recorded attempt, when set
		run      enumspb.WorkflowExecutionStatus
	}
	tests := []struct {
		name  string
		body  string // the receiver's 200 answer; "" answers 500
		fault func(a *models.DeliveryAttempt) bool
		want  want
	}{
		{name: "acknowledgement followed by NUL", body: webhooktest.AckSentence + "\x00",
			want: want{models.EventDelivered, 1, 1, models.AttemptSucceeded, webhooktest.AckSentence + "\uFFFD", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED}},
		{name: "acknowledgement in UTF-16", body: webhooktest.UTF16LE(webhooktest.AckSentence),
			want: want{models.EventFailed, wire.MaxAttempts, wire.MaxAttempts, models.AttemptFailed,
				"\uFFFD" + strings.Join(strings.Split(webhooktest.AckSentence, ""), "\uFFFD") + "\uFFFD", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED}},
		{name: "database fails while the last attempt is recorded",
			fault: func(a *models.DeliveryAttempt) bool { return a.Number == wire.MaxAttempts },
			want:  want{models.EventFailed, wire.MaxAttempts, wire.MaxAttempts - 1, models.AttemptFailed, "", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED}},
		{name: "database fails while a success is recorded", body: webhooktest.AckSentence,
			fault: failFor(4 * time.Second), // past the attempt's own record retries
			want:  want{models.EventDelivered, 1, 1, models.AttemptSucceeded, "", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) {
				if tt.body == "" {
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				_, _ = io.WriteString(w, tt.body)
			})
			faults.set(tt.fault)
			defer faults.set(nil)
			before := len(s.rc.Received())
			ev := s.events(1)[0]
			if err := st.Start(ctx, ev); err != nil {
				t.Fatal(err)
			}
			s.waitStatus([]models.Event{ev}, tt.want.status, 60*time.Second)
			waitRunStatus(t, c, wire.WorkflowID(ev.ID), tt.want.run)

			if n := len(s.rc.Received()) - before; n != tt.want.requests {
				t.Errorf("receiver got %d requests, want %d", n, tt.want.requests)
			}
			as, err := s.db.Store.DeliveryAttempts(ctx, s.db.Env, ev.ID)
			if err != nil || len(as) != tt.want.attempts {
				t.Fatalf("%d attempts recorded (err %v), want %d", len(as), err, tt.want.attempts)
			}
			last := as[len(as)-1]
			if last.Outcome != tt.want.outcome || tt.want.excerpt != "" && last.ResponseExcerpt != tt.want.excerpt {
				t.Errorf("last attempt %+v, want %s with excerpt %q", last, tt.want.outcome, tt.want.excerpt)
			}
		})
	}
}

// failFor fails every record from the first one on, for d.
func failFor(d time.Duration) func(*models.DeliveryAttempt) bool {
	var until time.Time
	return func(*models.DeliveryAttempt) bool {
		if until.IsZero() {
			until = time.Now().Add(d)
		}
		return time.Now().Before(until)
	}
}

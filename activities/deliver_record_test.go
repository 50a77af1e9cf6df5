package activities_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A receiver's answer can never make its own attempt unrecordable on PostgreSQL
// (CONTRACT §15): the attempt is recorded once, with the bytes replaced, the event gets
// the attempt's status, and the receiver is not sent the event again.
func TestHostileAnswersAreRecordedAndSentOnce(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		err     string // the activity's error, "" for success
		outcome string
		status  string
		excerpt string
	}{
		{"sentence then NUL", webhooktest.AckSentence + "\x00", "", models.AttemptSucceeded, models.EventDelivered, webhooktest.AckSentence + "\uFFFD"},
		{"sentence in UTF-16", webhooktest.UTF16LE(webhooktest.AckSentence), "ack sentence missing", models.AttemptFailed, models.EventRetrying,
			"\uFFFD" + strings.Join(strings.Split(webhooktest.AckSentence, ""), "\uFFFD") + "\uFFFD"},
		{"invalid UTF-8", webhooktest.AckSentence + "\xc3\x28\xff", "", models.AttemptSucceeded, models.EventDelivered, webhooktest.AckSentence + "\uFFFD(\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, tt.body) })
			f.endpoint(t, f.rc.URL, http.MethodPost, true)
			ev := f.db.Event(t, "deal-signed", map[string]any{"id": "d"}, time.Time{})

			err := f.deliver(t, ev, 6)
			var appErr *temporal.ApplicationError
			if tt.err == "" && err != nil || tt.err != "" && (!errors.As(err, &appErr) || appErr.Message() != tt.err) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if n := len(f.rc.Received()); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
			if st := f.db.Load(t, ev.ID).Status; st != tt.status {
				t.Errorf("status %s, want %s", st, tt.status)
			}
			as := f.attempts(t, ev)
			if len(as) != 1 || as[0].Outcome != tt.outcome || as[0].ResponseExcerpt != tt.excerpt || as[0].StatusCode != 200 {
				t.Fatalf("attempts %+v, want one %s with excerpt %q", as, tt.outcome, tt.excerpt)
			}
		})
	}
}

// An attempt of a run that has already delivered (its completion was lost, or came after
// the deadline) sends nothing; a new run of the same event (a replay) sends again.
func TestAttemptAfterDeliveryInItsRunDoesNotSend(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, f.rc.URL, http.MethodPost, true)
	ev := f.db.Event(t, "deal-signed", map[string]any{"id": "d"}, time.Time{})
	if err := f.deliver(t, ev, 6); err != nil {
		t.Fatal(err)
	}
	if err := f.deliver(t, ev, 6); err != nil { // the test environment's run id again
		t.Fatalf("second attempt: %v", err)
	}
	if n, as := len(f.rc.Received()), f.attempts(t, ev); n != 1 || len(as) != 1 {
		t.Fatalf("%d requests and %d attempts after a second attempt of a delivered run, want 1 and 1", n, len(as))
	}
	if st := f.db.Load(t, ev.ID).Status; st != models.EventDelivered {
		t.Errorf("status %s, want delivered", st)
	}

	other := f.db.Event(t, "deal-signed", map[string]any{"id": "d2"}, time.Time{})
	delivered := models.DeliveryAttempt{EventID: other.ID, RunID: "an-earlier-run", Number: 1, Trigger: models.TriggerScheduled,
		StartedAt: time.Now().UTC(), Outcome: models.AttemptSucceeded}
	if err := webhooktest.RecordAttempt(context.Background(), f.db.Store, f.db.Env, &delivered, models.EventDelivered); err != nil {
		t.Fatal(err)
	}
	if err := f.deliver(t, other, 6); err != nil {
		t.Fatal(err)
	}
	if n := len(f.rc.Received()); n != 2 {
		t.Fatalf("an event delivered by an earlier run was not sent by a new run (%d requests, want 2)", n)
	}
}

// flakyStore fails the attempt's record: `failures` times (-1: always); when commit is set the
// failed calls write first, as a commit whose answer was lost.
type flakyStore struct {
	*store.Store
	mu       sync.Mutex
	failures int
	commit   bool
	calls    int
}

// RecordAttempt is the activity's record (activities.AttemptRecorder): it fails
// failures times (always when negative), after committing when commit is set.
func (s *flakyStore) RecordAttempt(ctx context.Context, env models.Env, a *models.DeliveryAttempt, status string) error {
	s.mu.Lock()
	s.calls++
	fail := s.failures < 0 || s.calls <= s.failures
	s.mu.Unlock()
	real := webhook.Recorder{Store: s.Store}
	if !fail {
		return real.RecordAttempt(ctx, env, a, status)
	}
	if s.commit {
		if err := real.RecordAttempt(ctx, env, a, status); err != nil {
			return err
		}
	}
	return errors.New("connection reset by peer")
}

// The record is retried, never the send: a failed write is tried again (without doubling
// a write that did commit), and a successful send whose record keeps failing still ends
// the activity successfully, so Temporal does not send it again.
func TestRecordFailuresNeverResend(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		commit   bool
		respond  int // the receiver's status
		wantErr  string
		attempts int
		status   string
	}{
		{"record fails twice, then succeeds", 2, false, 200, "", 1, models.EventDelivered},
		{"first write committed unseen", 1, true, 200, "", 1, models.EventDelivered},
		{"record keeps failing after a success", -1, false, 200, "", 0, models.EventPending},
		{"record keeps failing after a failure", -1, false, 503, "status 503", 0, models.EventPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			fs := &flakyStore{Store: f.db.Store, failures: tt.failures, commit: tt.commit}
			f.acts.Store, f.acts.Recorder = fs, fs
			f.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.respond)
				_, _ = io.WriteString(w, webhooktest.AckSentence)
			})
			f.endpoint(t, f.rc.URL, http.MethodPost, true)
			ev := f.db.Event(t, "deal-signed", map[string]any{"id": "d"}, time.Time{})

			res, err := f.deliverResult(t, ev)
			var appErr *temporal.ApplicationError
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (!errors.As(err, &appErr) || appErr.Message() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if n := len(f.rc.Received()); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
			// Only a success the attempt could not record is handed to the workflow.
			if handed := res.Unrecorded != nil; handed != (tt.wantErr == "" && tt.attempts == 0) {
				t.Errorf("result %+v: unrecorded attempt handed to the workflow = %v", res, handed)
			}
			if as := f.attempts(t, ev); len(as) != tt.attempts {
				t.Errorf("%d attempts recorded, want %d", len(as), tt.attempts)
			}
			if st := f.db.Load(t, ev.ID).Status; st != tt.status {
				t.Errorf("status %s, want %s", st, tt.status)
			}
			if fs.calls < 2 {
				t.Errorf("record tried %d times, want retries", fs.calls)
			}
		})
	}
}

// deliverResult runs the activity once and decodes its result.
func (f *fixture) deliverResult(t *testing.T, ev models.Event) (activities.DeliverResult, error) {
	t.Helper()
	var res activities.DeliverResult
	val, err := f.run(f.acts.DeliverWebhook, activities.DeliverInput{EventID: ev.ID, Trigger: models.TriggerScheduled, MaxAttempts: 6})
	if err == nil {
		if derr := val.Get(&res); derr != nil {
			t.Fatal(derr)
		}
	}
	return res, err
}

// A successful attempt the activity could not record is written by RecordDelivered
// (the workflow's, retried until the database answers): once, with the endpoint's URL,
// even when an earlier write of the same attempt did commit.
func TestRecordDeliveredWritesTheAttemptOnce(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, f.rc.URL+"/hooks", http.MethodPost, true)
	ev := f.db.Event(t, "deal-signed", map[string]any{"id": "d"}, time.Time{})
	in := activities.RecordDeliveredInput{EventID: ev.ID, Attempt: activities.UnrecordedAttempt{
		ID: "6f1c3f0e-5a43-4d57-9d7e-0c4b5ad1e001", Number: 2, Trigger: models.TriggerScheduled, Method: http.MethodPost,
		StartedAt: time.Now().UTC().Truncate(time.Millisecond), DurationMS: 42, StatusCode: 200,
	}}
	for range 2 { // the second run: the first one's completion was lost
		if _, err := f.run(f.acts.RecordDelivered, in); err != nil {
			t.Fatal(err)
		}
	}
	as := f.attempts(t, ev)
	if len(as) != 1 {
		t.Fatalf("%d attempts recorded, want 1", len(as))
	}
	a := as[0]
	if a.ID != in.Attempt.ID || a.Number != 2 || a.Outcome != models.AttemptSucceeded || a.StatusCode != 200 || a.DurationMS != 42 ||
		a.URL != f.rc.URL+"/hooks" || a.RunID == "" {
		t.Errorf("attempt recorded as %+v", a)
	}
	if st := f.db.Load(t, ev.ID).Status; st != models.EventDelivered {
		t.Errorf("status %s, want delivered", st)
	}

	// An event that is not there will not appear: the workflow's unlimited retries stop.
	_, err := f.run(f.acts.RecordDelivered, activities.RecordDeliveredInput{EventID: "9d0c1a52-0000-4000-8000-000000000000", Attempt: in.Attempt})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() {
		t.Fatalf("record for a missing event: %v, want a non-retryable error", err)
	}
}

// The workflow's own activity marks a delivery failed whatever the last attempt could
// record, and never overwrites a final status.
func TestMarkDeliveryFailed(t *testing.T) {
	tests := []struct{ from, want string }{
		{models.EventPending, models.EventFailed},
		{models.EventRetrying, models.EventFailed},
		{models.EventFailed, models.EventFailed},
		{models.EventDelivered, models.EventDelivered},
		{models.EventSkipped, models.EventSkipped},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.from, func(t *testing.T) {
			ev := f.db.Event(t, "deal-signed", map[string]any{"id": "d"}, time.Time{})
			if err := f.db.Store.SetEventStatus(context.Background(), f.db.Env, ev.ID, tt.from); err != nil {
				t.Fatal(err)
			}
			if _, err := f.run(f.acts.MarkDeliveryFailed, activities.MarkFailedInput{EventID: ev.ID}); err != nil {
				t.Fatal(err)
			}
			if st := f.db.Load(t, ev.ID).Status; st != tt.want {
				t.Errorf("status %s, want %s", st, tt.want)
			}
		})
	}
}

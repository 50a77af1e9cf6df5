package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// pausingWriter holds each change open, its work done but not committed, until told.
type pausingWriter struct {
	st              *store.Store
	judged, release chan struct{}
}

func (w pausingWriter) InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error) {
	return w.st.InTx(ctx, env, func(tx *store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		close(w.judged)
		<-w.release
		return nil
	})
}

// A success recorded beside the failure that starts a spell (PostgreSQL: its record's
// snapshot predates the failure's commit, so it reads no spell to end) still ends the
// spell when it began after the failure: the endpoint is not announced failing 15
// minutes on, when no attempt has failed since its last success.
func TestHealthSuccessBesideAFailureEndsItsSpell(t *testing.T) {
	db, raw := postgresRaw(t, models.EnvLive)
	ctx := context.Background()
	a := newEndpoint(t, db, "https://a.example/", nil, true)
	newEndpoint(t, db, "https://ops.example/", healthTypes, true)
	now := time.Now().UTC().Truncate(time.Microsecond)
	dFail := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
	dOK := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]

	w := pausingWriter{st: db.st, judged: make(chan struct{}), release: make(chan struct{})}
	failed := make(chan error, 1)
	go func() {
		att := models.DeliveryAttempt{EventID: dFail.EventID, DeliveryID: dFail.ID, RunID: "run-1", Number: 1,
			Trigger: models.TriggerScheduled, StartedAt: now.Add(-2 * time.Second), Outcome: models.AttemptFailed, Error: "status 500"}
		failed <- webhook.RecordAttempt(ctx, w, db.env, &att, models.EventRetrying, failingAfter)
	}()
	<-w.judged // the failure holds the health row, its spell started, not committed
	succeeded := make(chan error, 1)
	go func() {
		att := models.DeliveryAttempt{EventID: dOK.EventID, DeliveryID: dOK.ID, RunID: "run-1", Number: 1,
			Trigger: models.TriggerScheduled, StartedAt: now, Outcome: models.AttemptSucceeded}
		succeeded <- webhook.RecordAttempt(ctx, db.st, db.env, &att, models.EventDelivered, failingAfter)
	}()
	waitForLockWaiters(t, raw, 1) // the success's record waits for the health row
	close(w.release)
	if err := <-failed; err != nil {
		t.Fatal(err)
	}
	if err := <-succeeded; err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.CheckHealth(ctx, db.st, now.Add(20*time.Minute), failingAfter, 10); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, db, 0, 0, 0)
	if h := healthStatus(t, db, a.ID); h.Status == models.HealthFailing || h.FailingSince != nil {
		t.Fatalf("after a failure and a later success: %+v, want no spell", h)
	}
}

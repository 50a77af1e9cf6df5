package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// A write of an attempt retried after the first one committed unseen (its answer lost)
// changes nothing: the first set the status, and a replay may have put the delivery back
// to pending since — the retry must not undo that replay. For the fan-out's attempts and
// for those of the single-endpoint releases (no DeliveryID).
func TestRetriedRecordDoesNotUndoAReplay(t *testing.T) {
	for name, db := range bothDatabases(t, models.EnvLive) {
		for _, single := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/single=%v", name, single), func(t *testing.T) {
				ctx := context.Background()
				ep := newEndpoint(t, db, "https://a.example/", nil, true)
				ev := newAccountEvent(t, db)
				d := deliveriesByEndpoint(t, db, ev.ID)[ep.ID]
				att := models.DeliveryAttempt{ID: uuid.NewString(), EventID: ev.ID, DeliveryID: d.ID, RunID: "r1", Number: 6,
					Trigger: models.TriggerScheduled, StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 500"}
				if single {
					att.DeliveryID = ""
				}
				retry := att
				if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &att, models.EventFailed); err != nil {
					t.Fatal(err)
				}
				// The single-endpoint releases' attempt lands on the oldest endpoint's delivery.
				target := att.EndpointID
				if got := deliveriesByEndpoint(t, db, ev.ID)[target]; got.Status != models.EventFailed {
					t.Fatalf("delivery %s after the attempt, want failed", got.Status)
				}
				if _, err := replay.Deliveries(ctx, db.st, db.env, ev.ID, target); err != nil {
					t.Fatalf("replay: %v", err)
				}
				if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &retry, models.EventFailed); err != nil {
					t.Fatal(err)
				}
				if got := deliveriesByEndpoint(t, db, ev.ID)[target]; got.Status != models.EventPending {
					t.Fatalf("delivery %s after the retried write, want pending (replayed)", got.Status)
				}
				if s := eventStatus(t, db, ev.ID); s != models.EventPending {
					t.Fatalf("event %s after the retried write, want pending", s)
				}
				if n := countWhere(t, db, "delivery_attempts", "id = ?", att.ID); n != 1 {
					t.Fatalf("%d attempts stored, want 1", n)
				}
			})
		}
	}
}

// An attempt of a delivery is written once however often its write is retried, takes its
// delivery's endpoint, sets the delivery's status and error and summarises the event; an
// attempt of a delivery (or event) that does not exist is refused and leaves nothing.
func TestRecordDeliveryAttemptOfADelivery(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/", nil, true)
		b := newEndpoint(t, db, "https://b.example/", nil, true)
		ev := newAccountEvent(t, db)
		d := deliveriesByEndpoint(t, db, ev.ID)[b.ID]
		att := models.DeliveryAttempt{ID: uuid.NewString(), EventID: ev.ID, DeliveryID: d.ID, RunID: "r1", Number: 1,
			Trigger: models.TriggerScheduled, StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 500"}
		for i := 0; i < 3; i++ {
			if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &att, models.EventRetrying); err != nil {
				t.Fatal(err)
			}
		}
		as, err := db.st.DeliveryAttempts(ctx, db.env, ev.ID)
		if err != nil || len(as) != 1 || as[0].ID != att.ID || as[0].DeliveryID != d.ID || as[0].EndpointID != b.ID ||
			as[0].EnvironmentID != db.env.ID || as[0].Error != "status 500" || att.EndpointID != b.ID {
			t.Fatalf("attempts %+v (%v), want the one attempt to endpoint b", as, err)
		}
		got := deliveriesByEndpoint(t, db, ev.ID)
		if got[b.ID].Status != models.EventRetrying || got[b.ID].LastError != "status 500" || got[a.ID].Status != models.EventPending {
			t.Fatalf("deliveries after the attempt: %+v", got)
		}
		if s := eventStatus(t, db, ev.ID); s != models.EventRetrying {
			t.Fatalf("event %q, want retrying", s)
		}
		attempt(t, db, got[b.ID], models.AttemptSucceeded, models.EventDelivered, time.Now().UTC())
		if d := deliveriesByEndpoint(t, db, ev.ID)[b.ID]; d.Status != models.EventDelivered || d.LastError != "" {
			t.Fatalf("delivery after a success: %+v, want delivered without error", d)
		}
		if s := eventStatus(t, db, ev.ID); s != models.EventPending {
			t.Fatalf("event %q, want pending (a is)", s)
		}

		gone := uuid.NewString()
		orphan := insertDelivery(t, db, gone, a.ID, models.EventPending)
		missing := []models.DeliveryAttempt{
			{EventID: ev.ID, DeliveryID: uuid.NewString()}, // no such delivery
			{EventID: uuid.NewString(), DeliveryID: d.ID},  // the delivery of another event
			{EventID: gone, DeliveryID: orphan},            // a delivery whose event is gone
		}
		for i, m := range missing {
			m.RunID, m.Number, m.Trigger, m.StartedAt, m.Outcome = "r1", 1, models.TriggerScheduled, time.Now().UTC(), models.AttemptSucceeded
			if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &m, models.EventDelivered); !errors.Is(err, apperr.ErrNotFound) {
				t.Errorf("attempt %d of a missing delivery or event: %v, want not found", i, err)
			}
			if n := countWhere(t, db, "delivery_attempts", "id = ?", m.ID); n != 0 {
				t.Errorf("attempt %d of a missing delivery or event was written", i)
			}
		}
		if got := deliveriesByEndpoint(t, db, ev.ID)[b.ID]; got.Status != models.EventDelivered {
			t.Errorf("delivery changed by an attempt naming another event: %+v", got)
		}
		if n := countWhere(t, db, "webhook_deliveries", "id = ? AND status = 'pending'", orphan); n != 1 {
			t.Errorf("the delivery of a gone event changed")
		}
	})
}

// An attempt of a run of the single-endpoint releases whose event has no delivery (no
// endpoint took it) sets the event's own status.
func TestRecordAttemptOfAnEventWithoutDeliveries(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		ev := newAccountEvent(t, db) // no endpoint: skipped, no delivery
		a := models.DeliveryAttempt{EventID: ev.ID, RunID: "r1", Number: 1, Trigger: models.TriggerScheduled,
			StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 500"}
		if err := webhooktest.RecordAttempt(context.Background(), db.st, db.env, &a, models.EventFailed); err != nil {
			t.Fatal(err)
		}
		as, err := db.st.DeliveryAttempts(context.Background(), db.env, ev.ID)
		if err != nil || len(as) != 1 || as[0].DeliveryID != "" {
			t.Fatalf("attempts %+v %v", as, err)
		}
		if s := eventStatus(t, db, ev.ID); s != models.EventFailed {
			t.Fatalf("event %q, want failed", s)
		}
	})
}

// A record that waited for its event while a sibling's change committed summarises the
// event with that change, and does not revive a delivery its endpoint's deletion skipped
// meanwhile (PostgreSQL, READ COMMITTED: the record's statements may begin before the
// change commits). The changes are made by hand in one transaction that holds the event,
// as a sibling record or DeleteWebhookEndpoint would.
func TestRecordSeesWhatCommittedWhileItWaitedForTheEvent(t *testing.T) {
	db, raw := postgresRaw(t, models.EnvLive)
	ctx := context.Background()
	a := newEndpoint(t, db, "https://a.example/", nil, true)
	b := newEndpoint(t, db, "https://b.example/", nil, true)
	c := newEndpoint(t, db, "https://c.example/", nil, true)
	ev := newAccountEvent(t, db)
	ds := deliveriesByEndpoint(t, db, ev.ID)

	tx := raw.Begin()
	if err := tx.Exec(`SELECT id FROM events WHERE id = ? FOR UPDATE`, ev.ID).Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		done <- webhooktest.RecordAttempt(ctx, db.st, db.env, &models.DeliveryAttempt{EventID: ev.ID, DeliveryID: ds[a.ID].ID, RunID: "r1",
			Number: 1, Trigger: models.TriggerScheduled, StartedAt: time.Now().UTC(), Outcome: models.AttemptSucceeded}, models.EventDelivered)
	}()
	waitForLockWaiters(t, raw, 1)
	go func() {
		done <- webhooktest.RecordAttempt(ctx, db.st, db.env, &models.DeliveryAttempt{EventID: ev.ID, DeliveryID: ds[c.ID].ID, RunID: "r1",
			Number: 1, Trigger: models.TriggerScheduled, StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 500"}, models.EventRetrying)
	}()
	waitForLockWaiters(t, raw, 2)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE webhook_deliveries SET status = 'failed', last_error = 'status 502' WHERE id = ?`, []any{ds[b.ID].ID}},
		{`UPDATE webhook_deliveries SET status = 'skipped', last_error = 'endpoint_deleted' WHERE id = ?`, []any{ds[c.ID].ID}},
		{`UPDATE events SET status = 'failed' WHERE id = ?`, []any{ev.ID}},
	} {
		if err := tx.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	got := deliveriesByEndpoint(t, db, ev.ID)
	if got[a.ID].Status != models.EventDelivered || got[b.ID].Status != models.EventFailed ||
		got[c.ID].Status != models.EventSkipped || got[c.ID].LastError != models.DeliveryEndpointDeleted {
		t.Fatalf("deliveries %+v, want a delivered, b failed, c still skipped by the deletion", got)
	}
	if s := eventStatus(t, db, ev.ID); s != models.EventFailed {
		t.Fatalf("event %q, want failed (b's failure committed while the records waited)", s)
	}
}

// Three deliveries of one event recording different outcomes at the same moment, round
// after round: the event always ends with the summary of its deliveries as stored.
func TestConcurrentRecordsOfOneEventSummariseAllItsDeliveries(t *testing.T) {
	db := bothDatabases(t, models.EnvLive)["postgres"]
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		newEndpoint(t, db, fmt.Sprintf("https://%d.example/", i), nil, true)
	}
	ev := newAccountEvent(t, db)
	ds, err := db.st.EventDeliveries(ctx, db.env, ev.ID)
	if err != nil || len(ds) != 3 {
		t.Fatalf("deliveries %v %v", ds, err)
	}
	outcomes := []struct{ outcome, status string }{
		{models.AttemptSucceeded, models.EventDelivered},
		{models.AttemptFailed, models.EventRetrying},
		{models.AttemptFailed, models.EventFailed},
	}
	const rounds = 150
	for r := 0; r < rounds; r++ {
		if err := db.st.SetEventStatus(ctx, db.env, ev.ID, models.EventPending); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		errs := make(chan error, len(ds))
		var wg sync.WaitGroup
		for i, d := range ds {
			o := outcomes[(r/[]int{1, 3, 9}[i])%3] // every combination in turn
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs <- webhooktest.RecordAttempt(ctx, db.st, db.env, &models.DeliveryAttempt{EventID: ev.ID, DeliveryID: d.ID,
					RunID: "r1", Number: r + 1, Trigger: models.TriggerScheduled, StartedAt: time.Now().UTC(), Outcome: o.outcome}, o.status)
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		stored, err := db.st.EventDeliveries(ctx, db.env, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		var statuses []string
		for _, d := range stored {
			statuses = append(statuses, d.Status)
		}
		if got, want := eventStatus(t, db, ev.ID), store.SummarizeDeliveries(statuses); got != want {
			t.Fatalf("round %d: event %q, deliveries %v summarise to %q", r, got, statuses, want)
		}
	}
	as, err := db.st.DeliveryAttempts(ctx, db.env, ev.ID)
	if err != nil || len(as) != 3*rounds {
		t.Fatalf("%d attempts (%v), want %d", len(as), err, 3*rounds)
	}
}

func countWhere(t *testing.T, db seeded, table, where string, arg any) int64 {
	t.Helper()
	var n int64
	if err := db.st.CountForTest(context.Background(), table, where, arg, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// postgresRaw is bothDatabases' PostgreSQL store, with a connection of its own to its
// database (rawPostgres) for a test that holds locks by hand.
func postgresRaw(t *testing.T, envName string) (seeded, *gorm.DB) {
	t.Helper()
	db := bothDatabases(t, envName)["postgres"]
	return db, rawPostgres(t, db.url)
}

// rawPostgres is a second connection to the test's database, for transactions held by hand.
func rawPostgres(t *testing.T, url string) *gorm.DB {
	t.Helper()
	return testdb.Raw(t, "postgres", url)
}

// waitForLockWaiters waits until n sessions of this database wait for a lock.
func waitForLockWaiters(t *testing.T, raw *gorm.DB, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got int64
		err := raw.Raw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&got).Error
		if err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions wait for a lock, want %d", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Every field of an attempt is stored as the step-by-step record stored it.
func TestRecordDeliveryAttemptStoresEveryField(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		newEndpoint(t, db, "https://a.example/", nil, true)
		newEndpoint(t, db, "https://b.example/", nil, true)
		ev := newAccountEvent(t, db)
		ds, err := db.st.EventDeliveries(ctx, db.env, ev.ID)
		if err != nil || len(ds) != 2 {
			t.Fatalf("deliveries %v %v", ds, err)
		}
		at := time.Now().UTC().Truncate(time.Millisecond)
		full := func(d models.WebhookDelivery) models.DeliveryAttempt {
			return models.DeliveryAttempt{EventID: ev.ID, DeliveryID: d.ID, RunID: "r1", Number: 2, Trigger: models.TriggerManual,
				URL: "https://a.example/", Method: "POST", StartedAt: at, DurationMS: 12, StatusCode: 500,
				ResponseExcerpt: "oops", Error: "status 500", Outcome: models.AttemptFailed, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
				RetryDelayMS: 3_600_000, CreatedAt: at}
		}
		want, got := full(ds[0]), full(ds[1])
		if err := db.st.RecordDeliveryAttemptStepByStepForTest(ctx, db.env, &want, webhook.AttemptChange(&want, models.EventRetrying)); err != nil {
			t.Fatal(err)
		}
		if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &got, models.EventRetrying); err != nil {
			t.Fatal(err)
		}
		stored := map[string]models.DeliveryAttempt{}
		as, err := db.st.DeliveryAttempts(ctx, db.env, ev.ID)
		if err != nil || len(as) != 2 {
			t.Fatalf("attempts %v %v", as, err)
		}
		for _, a := range as {
			stored[a.ID] = a
		}
		w, g := stored[want.ID], stored[got.ID]
		allFieldsSet(t, g)
		if g.DeliveryID != ds[1].ID || g.EndpointID != ds[1].EndpointID {
			t.Errorf("attempt of delivery %s to %s: %+v", ds[1].ID, ds[1].EndpointID, g)
		}
		w.ID, w.DeliveryID, w.EndpointID = g.ID, g.DeliveryID, g.EndpointID
		if !reflect.DeepEqual(g, w) {
			t.Errorf("stored\n %+v\nstep by step\n %+v", g, w)
		}
	})
}

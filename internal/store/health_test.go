package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/catalog/catalogtest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// Endpoint health (CONTRACT §23): the transitions the webhook domain makes from the
// facts the attempt records leave, on both databases.

const failingAfter = 15 * time.Minute

var healthTypes = []string{catalog.EndpointFailing, catalog.EndpointRecovered, catalog.DeliveryExhausted}

// recordHealth records attempt number n of d through the webhook domain (as the
// delivery activity does), started at `at`.
func recordHealth(t *testing.T, db seeded, d models.WebhookDelivery, outcome, status string, n int, at time.Time) {
	t.Helper()
	a := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "run-1", Number: n,
		Trigger: models.TriggerScheduled, StartedAt: at, Outcome: outcome}
	if outcome == models.AttemptFailed {
		a.Error = "status 500"
	}
	if err := webhook.RecordAttempt(context.Background(), db.st, db.env, &a, status, failingAfter); err != nil {
		t.Fatalf("record attempt: %v", err)
	}
}

// healthEvents lists the environment's events of type typ, oldest first, each body
// checked against the catalog's schema.
func healthEvents(t *testing.T, db seeded, typ string) []models.Event {
	t.Helper()
	evs, _, err := db.st.Events(context.Background(), db.env, store.EventFilter{Type: typ}, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	for _, ev := range evs {
		if name, err := catalogtest.Validate([]byte(ev.Payload)); err != nil || name != typ {
			t.Errorf("%s body: %v\n%s", typ, err, ev.Payload)
		}
	}
	return evs
}

func healthCounts(t *testing.T, db seeded) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, typ := range healthTypes {
		out[typ] = len(healthEvents(t, db, typ))
	}
	return out
}

func wantCounts(t *testing.T, db seeded, failing, recovered, exhausted int) {
	t.Helper()
	got := healthCounts(t, db)
	want := map[string]int{catalog.EndpointFailing: failing, catalog.EndpointRecovered: recovered, catalog.DeliveryExhausted: exhausted}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", got[typ], typ, n, got)
		}
	}
}

func healthStatus(t *testing.T, db seeded, id string) webhook.HealthObject {
	t.Helper()
	ep, err := db.st.WebhookEndpointByID(context.Background(), db.env, id)
	if err != nil {
		t.Fatal(err)
	}
	return webhook.ToHealthObject(ep, time.Now())
}

func body(t *testing.T, ev models.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(ev.Payload), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// An endpoint whose attempts keep failing turns failing — judged by the minute check
// or at a failed attempt's record — and is announced once per spell to the endpoints
// that list endpoint-failing (never to "*"); its first success announces its recovery
// once.
func TestHealthFailingAndRecoveredOncePerSpell(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		a := newEndpoint(t, db, "https://user:pw@a.example:8443/secret?k=1", nil, true)
		ops := newEndpoint(t, db, "https://ops.example/", healthTypes, true)
		if h := healthStatus(t, db, a.ID); h.Status != models.HealthIdle || h.SuccessRate24h != nil {
			t.Fatalf("new endpoint: %+v, want idle", h)
		}

		// A failure 10 minutes old: not failing yet.
		d1 := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
		since := now.Add(-10 * time.Minute).Truncate(time.Microsecond)
		recordHealth(t, db, d1, models.AttemptFailed, models.EventRetrying, 1, since)
		if h := healthStatus(t, db, a.ID); h.Status != models.HealthHealthy || h.FailingSince == nil {
			t.Fatalf("after a young failure: %+v", h)
		}
		wantCounts(t, db, 0, 0, 0)

		// The minute check, 6 minutes on, finds the spell 16 minutes old: failing, once.
		for i := 0; i < 2; i++ {
			if _, err := webhook.CheckHealth(ctx, db.st, now.Add(6*time.Minute), failingAfter, 10); err != nil {
				t.Fatal(err)
			}
		}
		wantCounts(t, db, 1, 0, 0)
		if h := healthStatus(t, db, a.ID); h.Status != models.HealthFailing {
			t.Fatalf("after the check: %+v, want failing", h)
		}
		failing := healthEvents(t, db, catalog.EndpointFailing)[0]
		ep := body(t, failing)["webhook_endpoint"].(map[string]any)
		if failing.ObjectID != a.ID || ep["host"] != "a.example:8443" || ep["failing_since"] != since.Format(time.RFC3339Nano) {
			t.Fatalf("endpoint-failing: %s", failing.Payload)
		}
		if ds := deliveriesByEndpoint(t, db, failing.ID); len(ds) != 1 || ds[ops.ID].ID == "" {
			t.Fatalf("endpoint-failing deliveries %v: want the ops endpoint's only", ds)
		}

		// More failures of the same spell announce nothing more.
		for i := 2; i < 5; i++ {
			recordHealth(t, db, d1, models.AttemptFailed, models.EventRetrying, i, now.Add(time.Duration(i)*time.Second))
		}
		wantCounts(t, db, 1, 0, 0)

		// The first success: recovered, once; healthy again.
		d2 := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
		recordHealth(t, db, d2, models.AttemptSucceeded, models.EventDelivered, 1, now.Add(10*time.Second))
		d3 := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
		recordHealth(t, db, d3, models.AttemptSucceeded, models.EventDelivered, 1, now.Add(20*time.Second))
		wantCounts(t, db, 1, 1, 0)
		recovered := body(t, healthEvents(t, db, catalog.EndpointRecovered)[0])["webhook_endpoint"].(map[string]any)
		if recovered["failing_since"] != since.Format(time.RFC3339Nano) || recovered["recovered_at"] == nil {
			t.Fatalf("endpoint-recovered: %v", recovered)
		}
		if h := healthStatus(t, db, a.ID); h.Status != models.HealthHealthy || h.FailingSince != nil || h.LastSuccessAt == nil {
			t.Fatalf("after recovering: %+v", h)
		}

		// A failure that began before the last success, recorded late, starts no spell.
		recordHealth(t, db, d1, models.AttemptFailed, models.EventRetrying, 5, now.Add(15*time.Second))
		if h := healthStatus(t, db, a.ID); h.FailingSince != nil {
			t.Fatalf("a late failure started a spell: %+v", h)
		}

		// A new spell, judged at a failed attempt's record this time (failing after 5
		// minutes): announced again.
		recordHealth(t, db, d1, models.AttemptFailed, models.EventRetrying, 6, now.Add(30*time.Second))
		later := models.DeliveryAttempt{EventID: d1.EventID, DeliveryID: d1.ID, RunID: "run-1", Number: 7, Trigger: models.TriggerScheduled,
			StartedAt: now.Add(6 * time.Minute), Outcome: models.AttemptFailed, Error: "status 500"}
		if err := webhook.RecordAttempt(ctx, db.st, db.env, &later, models.EventRetrying, 5*time.Minute); err != nil {
			t.Fatal(err)
		}
		wantCounts(t, db, 2, 1, 0)
	})
}

// Attempts of operational deliveries count toward health, but never cause an
// operational event: no endpoint-failing, endpoint-recovered or delivery-exhausted.
func TestHealthOperationalAttemptsNeverEmit(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		ops := newEndpoint(t, db, "https://ops.example/", []string{catalog.EndpointDisabled}, true)
		notice := func() models.WebhookDelivery {
			evs, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error {
				tx.Emit(store.Emit{Type: catalog.EndpointDisabled, ObjectType: "webhook_endpoint", ObjectID: ops.ID,
					Object: catalog.DisabledEndpoint{ID: ops.ID, Host: "x.example", DisabledReason: "failing", FailingSince: now.Format(time.RFC3339)}})
				return nil
			})
			if err != nil || len(evs) != 1 {
				t.Fatalf("emit: %v %v", evs, err)
			}
			return deliveriesByEndpoint(t, db, evs[0].ID)[ops.ID]
		}
		d := notice()
		recordHealth(t, db, d, models.AttemptFailed, models.EventRetrying, 1, now.Add(-time.Hour))
		recordHealth(t, db, d, models.AttemptFailed, models.EventFailed, 6, now)
		if _, err := webhook.CheckHealth(ctx, db.st, now.Add(2*time.Minute), failingAfter, 10); err != nil {
			t.Fatal(err)
		}
		if h := healthStatus(t, db, ops.ID); h.Status != models.HealthFailing {
			t.Fatalf("health %+v: operational attempts count, want failing", h)
		}
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, notice().ID, "", nil, 0); err != nil {
			t.Fatal(err)
		}
		recordHealth(t, db, notice(), models.AttemptSucceeded, models.EventDelivered, 1, now.Add(time.Second))
		if h := healthStatus(t, db, ops.ID); h.Status != models.HealthHealthy {
			t.Fatalf("health %+v after a success, want healthy", h)
		}
		wantCounts(t, db, 0, 0, 0)
	})
}

// A delivery that uses its attempts up is announced at once; the others ending within
// the minute are summed into one event at its end (the latest in "delivery", how many
// in "suppressed"). MarkDeliveryFailed announces it when it is the one that ends the
// delivery, once however often it is retried, and never for endpoint_disabled.
func TestHealthDeliveryExhaustedOncePerMinute(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		a := newEndpoint(t, db, "https://a.example/", nil, true)
		newEndpoint(t, db, "https://ops.example/", healthTypes, true)
		var last models.WebhookDelivery
		for i := 0; i < 3; i++ {
			last = deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
			recordHealth(t, db, last, models.AttemptFailed, models.EventRetrying, 5, now)
			recordHealth(t, db, last, models.AttemptFailed, models.EventFailed, 6, now)
		}
		wantCounts(t, db, 0, 0, 1)
		first := body(t, healthEvents(t, db, catalog.DeliveryExhausted)[0])
		if first["suppressed"] != 0.0 || first["delivery"].(map[string]any)["attempts"] != 6.0 ||
			first["delivery"].(map[string]any)["last_error"] != "status 500" || first["delivery"].(map[string]any)["event_type"] != "account-created" {
			t.Fatalf("first delivery-exhausted: %v", first)
		}
		// The minute has not ended: nothing yet.
		if _, err := webhook.CheckHealth(ctx, db.st, now.Add(30*time.Second), failingAfter, 10); err != nil {
			t.Fatal(err)
		}
		wantCounts(t, db, 0, 0, 1)
		for i := 0; i < 2; i++ {
			if _, err := webhook.CheckHealth(ctx, db.st, now.Add(2*time.Minute), failingAfter, 10); err != nil {
				t.Fatal(err)
			}
		}
		wantCounts(t, db, 0, 0, 2)
		summary := body(t, healthEvents(t, db, catalog.DeliveryExhausted)[1])
		if summary["suppressed"] != 2.0 || summary["delivery"].(map[string]any)["id"] != last.ID || summary["delivery"].(map[string]any)["attempts"] != 2.0 {
			t.Fatalf("summary: %v, want the latest delivery and 2 suppressed", summary)
		}

		// MarkDeliveryFailed ending a delivery (its last record lost): once, retried or not.
		b := newEndpoint(t, db, "https://b.example/", nil, true)
		d := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[b.ID]
		recordHealth(t, db, d, models.AttemptFailed, models.EventRetrying, 1, now)
		for i := 0; i < 3; i++ {
			if _, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", nil, 0); err != nil {
				t.Fatal(err)
			}
		}
		off := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[b.ID]
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, off.ID, models.DeliveryEndpointDisabled, nil, 0); err != nil {
			t.Fatal(err)
		}
		evs := healthEvents(t, db, catalog.DeliveryExhausted)
		if len(evs) != 3 || evs[2].ObjectID != b.ID || body(t, evs[2])["delivery"].(map[string]any)["id"] != d.ID {
			t.Fatalf("%d delivery-exhausted events, want 3, the last of %s for %s", len(evs), b.ID, d.ID)
		}
	})
}

// Re-enabling a disabled endpoint clears its failing spell, and its next success
// announces its recovery.
func TestHealthReenabledRecoversOnNextSuccess(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		a := newEndpoint(t, db, "https://a.example/", nil, true)
		newEndpoint(t, db, "https://ops.example/", healthTypes, true)
		d := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
		since := now.Add(-time.Minute).Truncate(time.Microsecond)
		recordHealth(t, db, d, models.AttemptFailed, models.EventRetrying, 1, since)
		patch := func(on bool) {
			if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, a.ID, webhook.EndpointPatch{Enabled: &on}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
				t.Fatal(err)
			}
		}
		patch(false)
		if h := healthStatus(t, db, a.ID); h.Status != models.HealthDisabled {
			t.Fatalf("disabled: %+v", h)
		}
		patch(true)
		if h := healthStatus(t, db, a.ID); h.FailingSince != nil || h.Status == models.HealthFailing {
			t.Fatalf("re-enabled: %+v, want failing_since cleared", h)
		}
		wantCounts(t, db, 0, 0, 0)
		for i := 0; i < 2; i++ {
			d := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
			recordHealth(t, db, d, models.AttemptSucceeded, models.EventDelivered, 1, now.Add(time.Duration(i+1)*time.Second))
		}
		wantCounts(t, db, 0, 1, 0)
		ep := body(t, healthEvents(t, db, catalog.EndpointRecovered)[0])["webhook_endpoint"].(map[string]any)
		if ep["failing_since"] != since.Format(time.RFC3339Nano) {
			t.Fatalf("endpoint-recovered after re-enabling: %v, want the cleared spell's start", ep)
		}
	})
}

// An endpoint's deletion (the endpoint alone) and its job's pages (events alone, several
// in id order) run beside the records of its attempts (event, then health row) and the
// ends of its deliveries (endpoint, event, health row) without a deadlock (CONTRACT §23),
// and leave none of its deliveries unfinished.
func TestHealthDeletionBesideRecordsNoDeadlock(t *testing.T) {
	db := bothDatabases(t, models.EnvLive)["postgres"]
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		a := newEndpoint(t, db, "https://a.example/", nil, true)
		var ds []models.WebhookDelivery
		for i := 0; i < 12; i++ {
			ds = append(ds, deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID])
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(ds)+2)
		start, deleted := make(chan struct{}), make(chan struct{})
		for i, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				at := time.Now().UTC().Add(-time.Hour)
				att := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "run-1", Number: 6,
					Trigger: models.TriggerScheduled, StartedAt: at, Outcome: models.AttemptFailed, Error: "status 500"}
				if i%3 == 0 {
					att.Number = 1
					// disableAfter 0: the automatic disabling's own lock of the endpoint
					// after the event (CONTRACT §13) is not this test's subject.
					_, err := webhook.MarkDeliveryFailed(ctx, db.st, d.ID, "", nil, 0)
					errs <- err
					return
				}
				errs <- webhook.RecordAttempt(ctx, db.st, db.env, &att, models.EventFailed, failingAfter)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := webhook.DeleteEndpoint(ctx, db.st, db.env, a.ID, idempotency.Reply[webhook.DeletedEndpoint]{})
			close(deleted)
			errs <- err
		}()
		wg.Add(1)
		go func() { // the deletion's job, pages of 3, while the records go on
			defer wg.Done()
			<-deleted
			for {
				n, err := webhook.SkipDeletedEndpointPage(ctx, db.st.OnJobsPool(), db.env.ID, a.ID, 3)
				if err != nil || n < 3 {
					errs <- err
					return
				}
			}
		}()
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil && !errors.Is(err, apperr.ErrNotFound) {
				t.Errorf("round %d: %v", round, err)
				if strings.Contains(err.Error(), "deadlock") {
					t.Fatal("deadlock")
				}
			}
		}
		if n := countWhere(t, db, "webhook_deliveries", "endpoint_id = ? AND status IN ('pending', 'retrying')", a.ID); n != 0 {
			t.Errorf("round %d: %d deliveries of the deleted endpoint left unfinished", round, n)
		}
	}
	// The health rows of deleted endpoints go with the check.
	if res, err := webhook.CheckHealth(ctx, db.st, time.Now().UTC(), failingAfter, 10); err != nil || res.Purged != 3 {
		t.Fatalf("check: %+v %v, want 3 orphan rows purged", res, err)
	}
}

// On PostgreSQL the record of a success of a healthy endpoint is the record's two
// statements (the attempt with its delivery's status and the health row's times in one,
// the event's summary in the other): health adds no round trip to the common path, and
// writes its row at most once a second. A failure that starts a spell adds the row's
// lock and its save.
func TestHealthSuccessPathStatements(t *testing.T) {
	db := bothDatabases(t, models.EnvLive)["postgres"]
	a := newEndpoint(t, db, "https://a.example/", nil, true)
	take, err := db.st.StatementsForTest()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	record := func(outcome, status string, at time.Time) []string {
		d := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
		take()
		recordHealth(t, db, d, outcome, status, 1, at)
		return take()
	}
	for i, at := range []time.Time{now, now.Add(100 * time.Millisecond), now.Add(5 * time.Second)} {
		if got := record(models.AttemptSucceeded, models.EventDelivered, at); len(got) != 2 {
			t.Errorf("success %d: %d statements, want 2:\n%s", i, len(got), strings.Join(got, "\n---\n"))
		}
	}
	if got := record(models.AttemptFailed, models.EventRetrying, now.Add(6*time.Second)); len(got) != 4 {
		t.Errorf("first failure: %d statements, want 4 (the record's 2, the row's lock and save):\n%s", len(got), strings.Join(got, "\n---\n"))
	}
	if h := healthStatus(t, db, a.ID); h.LastSuccessAt == nil || *h.LastSuccessAt != now.Add(5*time.Second).Format(time.RFC3339) {
		t.Errorf("last_success_at %v, want the 5 s later success's (the one 100 ms later not written)", h.LastSuccessAt)
	}
}

// An endpoint without a health row — created by a process of the release before endpoint
// health, during a rolling upgrade after migration 96 ran — gets one at its first
// attempt record, and its failures are judged like any endpoint's.
func TestHealthAdoptedAtFirstRecord(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		a := newEndpoint(t, db, "https://old.example/", nil, true)
		newEndpoint(t, db, "https://ops.example/", healthTypes, true)
		if err := testdb.Raw(t, db.name, db.url).Exec("DELETE FROM endpoint_health WHERE endpoint_id = ?", a.ID).Error; err != nil {
			t.Fatal(err)
		}
		d := deliveriesByEndpoint(t, db, newAccountEvent(t, db).ID)[a.ID]
		since := now.Add(-20 * time.Minute).Truncate(time.Microsecond)
		recordHealth(t, db, d, models.AttemptFailed, models.EventRetrying, 1, since)
		recordHealth(t, db, d, models.AttemptFailed, models.EventRetrying, 2, now)
		if h := healthStatus(t, db, a.ID); h.Status != models.HealthFailing || h.FailingSince == nil {
			t.Fatalf("an adopted endpoint failing for 20 minutes: %+v, want failing", h)
		}
		wantCounts(t, db, 1, 0, 0)
	})
}

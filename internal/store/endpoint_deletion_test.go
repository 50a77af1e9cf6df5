package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// deleteEndpoint deletes ep as the API does (the job is the test's to run).
func deleteEndpoint(t *testing.T, db seeded, id string) {
	t.Helper()
	if _, err := webhook.DeleteEndpoint(context.Background(), db.st, db.env, id, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
		t.Fatalf("delete endpoint %s: %v", id, err)
	}
}

// runDeletion runs the deletion job of endpoint id as its workflow does, pages of at
// most rows, and returns each page's count.
func runDeletion(t *testing.T, db seeded, id string, rows int) []int {
	t.Helper()
	ctx := context.Background()
	var pages []int
	for {
		n, err := webhook.SkipDeletedEndpointPage(ctx, db.st.OnJobsPool(), db.env.ID, id, rows)
		if err != nil {
			t.Fatalf("page %d of the deletion of %s: %v", len(pages)+1, id, err)
		}
		pages = append(pages, n)
		if n < rows {
			break
		}
	}
	if err := db.st.OnJobsPool().EndEndpointDeletion(ctx, id); err != nil {
		t.Fatal(err)
	}
	return pages
}

// CONTRACT §13, §21: deleting an endpoint answers without touching its deliveries — the
// endpoint is gone (not found, no new delivery) and its deletion recorded — and its job
// then ends its unfinished deliveries skipped (endpoint_deleted), a bounded page at a
// time, summarising their events again; finished deliveries stay as they were.
func TestDeleteEndpointEndsItsDeliveriesInPages(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/", nil, true)
		b := newEndpoint(t, db, "https://b.example/", nil, true)
		done := newAccountEvent(t, db)
		attempt(t, db, deliveriesByEndpoint(t, db, done.ID)[b.ID], models.AttemptSucceeded, models.EventDelivered, time.Now().UTC())
		var open []models.Event
		for i := range 6 {
			ev := newAccountEvent(t, db)
			attempt(t, db, deliveriesByEndpoint(t, db, ev.ID)[a.ID], models.AttemptSucceeded, models.EventDelivered, time.Now().UTC())
			if i > 0 { // the first stays pending: its first attempt not made yet
				attempt(t, db, deliveriesByEndpoint(t, db, ev.ID)[b.ID], models.AttemptFailed, models.EventRetrying, time.Now().UTC())
			}
			open = append(open, ev)
		}

		deleteEndpoint(t, db, b.ID)
		if _, err := db.st.WebhookEndpointByID(ctx, db.env, b.ID); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("deleted endpoint: %v, want not found", err)
		}
		if ev := newAccountEvent(t, db); len(deliveriesByEndpoint(t, db, ev.ID)) != 1 {
			t.Fatal("a deleted endpoint still takes new events")
		}
		if s := eventStatus(t, db, open[1].ID); s != models.EventRetrying {
			t.Fatalf("event right after the delete: %q, want retrying (left to the job)", s)
		}
		waiting, err := db.st.UnstartedEndpointDeletions(ctx, time.Now().Add(time.Hour), 10)
		if err != nil || len(waiting) != 1 || waiting[0].EndpointID != b.ID || waiting[0].EnvironmentID != db.env.ID {
			t.Fatalf("deletions awaiting their job: %+v %v", waiting, err)
		}

		if pages := runDeletion(t, db, b.ID, 2); !slices.Equal(pages, []int{2, 2, 2, 0}) {
			t.Fatalf("pages %v, want 2, 2, 2 then none", pages)
		}
		for _, ev := range open {
			if d := deliveriesByEndpoint(t, db, ev.ID)[b.ID]; d.Status != models.EventSkipped || d.LastError != models.DeliveryEndpointDeleted {
				t.Fatalf("unfinished delivery after the job: %+v", d)
			}
			if s := eventStatus(t, db, ev.ID); s != models.EventDelivered {
				t.Fatalf("event after the job: %q, want delivered (a delivered, b skipped)", s)
			}
		}
		if d := deliveriesByEndpoint(t, db, done.ID)[b.ID]; d.Status != models.EventDelivered {
			t.Fatalf("finished delivery after the job: %+v", d)
		}
		late := deliveriesByEndpoint(t, db, open[1].ID)[b.ID]
		attempt(t, db, late, models.AttemptFailed, models.EventRetrying, time.Now().UTC())
		if d := deliveriesByEndpoint(t, db, open[1].ID)[b.ID]; d.Status != models.EventSkipped || d.LastError != models.DeliveryEndpointDeleted {
			t.Fatalf("a late attempt revived the deleted endpoint's delivery: %+v", d)
		}
		if n := countWhere(t, db, "endpoint_deletions", "environment_id = ?", db.env.ID); n != 0 {
			t.Fatalf("%d deletion rows after the job, want none", n)
		}
		if _, err := webhook.DeleteEndpoint(ctx, db.st, db.env, b.ID, idempotency.Reply[webhook.DeletedEndpoint]{}); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
	})
}

// Before its deletion's job comes, whoever ends or continues a deleted endpoint's
// delivery ends it skipped (endpoint_deleted): an attempt recorded in flight, the last
// one too, and the settling of its series — never failed, so never announced
// (delivery-exhausted). A replay of every delivery leaves it alone, in progress or not.
func TestDeletedEndpointsDeliveryEndsSkippedWhoeverEndsIt(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/", []string{"account-created", catalog.DeliveryExhausted}, true)
		b := newEndpoint(t, db, "https://b.example/", nil, true)
		var ds []models.WebhookDelivery
		for range 4 {
			ev := newAccountEvent(t, db)
			attempt(t, db, deliveriesByEndpoint(t, db, ev.ID)[a.ID], models.AttemptFailed, models.EventFailed, time.Now().UTC())
			d := deliveriesByEndpoint(t, db, ev.ID)[b.ID]
			attempt(t, db, d, models.AttemptFailed, models.EventRetrying, time.Now().UTC())
			ds = append(ds, d)
		}
		deleteEndpoint(t, db, b.ID)

		attempt(t, db, ds[0], models.AttemptFailed, models.EventRetrying, time.Now().UTC())
		last := models.DeliveryAttempt{EventID: ds[1].EventID, DeliveryID: ds[1].ID, RunID: "run-1", Number: 6,
			Trigger: models.TriggerScheduled, StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 500"}
		if err := webhook.RecordAttempt(ctx, db.st, db.env, &last, models.EventFailed, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := webhook.MarkDeliveryFailed(ctx, db.st, ds[2].ID, "", nil, time.Nanosecond); err != nil {
			t.Fatal(err)
		}
		for i, d := range ds[:3] {
			got := deliveriesByEndpoint(t, db, d.EventID)[b.ID]
			if got.Status != models.EventSkipped || got.LastError != models.DeliveryEndpointDeleted {
				t.Errorf("delivery %d after its end: %s (%s), want skipped (endpoint_deleted)", i, got.Status, got.LastError)
			}
			if s := eventStatus(t, db, d.EventID); s != models.EventFailed {
				t.Errorf("event %d: %q, want failed (a's delivery failed, b's skipped)", i, s)
			}
		}
		if n := countWhere(t, db, "events", "type = ?", catalog.DeliveryExhausted); n != 0 {
			t.Errorf("%d delivery-exhausted events for a deleted endpoint's deliveries, want none", n)
		}
		target, err := db.st.DeliveryForAttempt(ctx, ds[0].ID)
		if err != nil || target.Endpoint != nil {
			t.Fatalf("DeliveryForAttempt of a deleted endpoint: %+v %v", target.Endpoint, err)
		}

		// A replay of the whole event goes again to a, never to the deleted b, whose
		// delivery still retrying (its job not run) is no delivery in progress.
		if _, err := replay.Deliveries(ctx, db.st, db.env, ds[3].EventID, ""); err != nil {
			t.Fatalf("replay beside a deleted endpoint's unfinished delivery: %v", err)
		}
		if got := deliveriesByEndpoint(t, db, ds[3].EventID); got[a.ID].Status != models.EventPending || got[b.ID].Status != models.EventRetrying {
			t.Fatalf("deliveries after the replay: a %s, b %s; want a pending, b left to the job", got[a.ID].Status, got[b.ID].Status)
		}
	})
}

// CONTRACT §21: a deleted endpoint holds its place among the environment's 16 until its
// job has ended, for POST and for the §8 PUT alike.
func TestDeletedEndpointsCountTowardTheLimit(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		var ids []string
		for range webhook.MaxEndpoints {
			ids = append(ids, newEndpoint(t, db, "https://a.example/", nil, true).ID)
		}
		deleteEndpoint(t, db, ids[0])
		create := func() error {
			_, err := webhook.CreateEndpoint(ctx, db.st, db.env, models.WebhookEndpoint{URL: "https://b.example/", Method: "POST",
				Enabled: true, Secret: "whsec_x"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
			return err
		}
		if err := create(); conflictCode(err) != "invalid too_many_endpoints " {
			t.Fatalf("a 16th endpoint beside a deletion awaiting its job: %v, want too_many_endpoints", err)
		}
		runDeletion(t, db, ids[0], webhook.DeletionRows)
		if err := create(); err != nil {
			t.Fatalf("a 16th endpoint once the deletion ended: %v", err)
		}

		for _, id := range ids[1:] {
			deleteEndpoint(t, db, id)
		}
		put := func() error {
			on, url := true, "https://put.example/"
			_, _, err := webhook.PutOldest(ctx, db.st, db.env, models.WebhookEndpoint{URL: url, Method: "POST", Enabled: true, Secret: "whsec_y"},
				webhook.EndpointPatch{URL: &url, Enabled: &on}, time.Now().UTC())
			return err
		}
		// One endpoint left (the one created above) and 15 deletions awaiting.
		if err := put(); err != nil {
			t.Fatalf("PUT updating the one endpoint left: %v", err)
		}
		list, err := db.st.AllWebhookEndpoints(ctx, db.env)
		if err != nil || len(list) != 1 {
			t.Fatalf("endpoints: %d, %v", len(list), err)
		}
		deleteEndpoint(t, db, list[0].ID)
		if err := put(); conflictCode(err) != "invalid too_many_endpoints " {
			t.Fatalf("PUT creating beside 16 deletions awaiting their job: %v, want too_many_endpoints", err)
		}
		runDeletion(t, db, list[0].ID, webhook.DeletionRows)
		if err := put(); err != nil {
			t.Fatalf("PUT creating once a deletion ended: %v", err)
		}
	})
}

// backlogs are the sizes of the heavy backlog whose DELETE must issue the same statements
// as a small one's: past PostgreSQL's 65,535 parameters, where the one-statement lock of
// every event failed; SQLite's is smaller (the rule, not the size, is what it checks).
var backlogs = map[string]int{"postgres": 70_000, "sqlite": 5_000}

// CONTRACT §21 "No statement takes a list of parameters that grows with the data": the
// DELETE of an endpoint with a large backlog of retrying deliveries issues exactly the
// statements of one with 10, and its job then ends every delivery skipped in pages of at
// most webhook.DeletionRows.
func TestDeleteEndpointStatementsDoNotGrowWithItsBacklog(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		small := newEndpoint(t, db, "https://small.example/", nil, true)
		big := newEndpoint(t, db, "https://big.example/", nil, true)
		raw := testdb.Raw(t, db.name, db.url)
		webhooktest.SeedBacklog(t, raw, db.env, small.ID, 10)
		webhooktest.SeedBacklog(t, raw, db.env, big.ID, backlogs[db.name])

		take, err := db.st.StatementsForTest()
		if err != nil {
			t.Fatal(err)
		}
		deleteEndpoint(t, db, small.ID)
		smallStatements := take()
		deleteEndpoint(t, db, big.ID)
		bigStatements := take()
		if len(smallStatements) == 0 || !slices.Equal(smallStatements, bigStatements) {
			t.Fatalf("DELETE with %d deliveries issued %d statements, with 10: %d; want the same\n%q\n%q",
				backlogs[db.name], len(bigStatements), len(smallStatements), bigStatements, smallStatements)
		}
		t.Logf("DELETE: %d statements with 10 retrying deliveries and with %d", len(smallStatements), backlogs[db.name])

		pages := runDeletion(t, db, big.ID, webhook.DeletionRows)
		if want := backlogs[db.name]/webhook.DeletionRows + 1; len(pages) != want || slices.Max(pages) > webhook.DeletionRows {
			t.Fatalf("%d pages (largest %d), want %d of at most %d", len(pages), slices.Max(pages), want, webhook.DeletionRows)
		}
		if n := countWhere(t, db, "webhook_deliveries", "endpoint_id = ? AND status = 'skipped' AND last_error = 'endpoint_deleted'", big.ID); n != int64(backlogs[db.name]) {
			t.Fatalf("%d deliveries skipped, want %d", n, backlogs[db.name])
		}
		if n := countWhere(t, db, "events", "object_id = 'backlog' AND status <> ?", models.EventSkipped); n != 10 {
			t.Fatalf("%d backlog events not summarised skipped, want the small endpoint's 10 (its job not run)", n)
		}
	})
}

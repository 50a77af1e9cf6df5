package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/models"
)

// failedEvents writes n account events, each with a delivery to every endpoint, all
// failed.
func failedEvents(t *testing.T, db seeded, n int) []models.Event {
	t.Helper()
	var evs []models.Event
	for range n {
		ev := newAccountEvent(t, db)
		if err := db.st.SetEventStatus(context.Background(), db.env, ev.ID, models.EventFailed); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func deliveryStatus(t *testing.T, db seeded, eventID, endpointID string) string {
	t.Helper()
	return deliveriesByEndpoint(t, db, eventID)[endpointID].Status
}

// A bulk replay page replays exactly its deliveries — the filter's endpoint and status,
// nothing created after the job — and moves the job's cursor and counts with them; the
// same page asked again (its answer was lost, the activity retried) replays nothing, even
// when its deliveries have failed again since; the last page ends the job.
func TestReplayPageReplaysEachDeliveryOnce(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
		b := newEndpoint(t, db, "https://b.example/hooks", nil, true)
		evs := failedEvents(t, db, 7)
		job, err := replay.CreateJob(ctx, db.st, db.env, events.Filter{EndpointID: a.ID, Status: models.EventFailed}, time.Now(), idempotency.Reply[replay.JobObject]{})
		if err != nil || job.Matched != 7 || job.Status != models.ReplayJobRunning {
			t.Fatalf("job = %+v, %v", job, err)
		}
		late := failedEvents(t, db, 1)[0] // after the job: never joins it
		rec := handedOver(db)             // the page's replayed events, handed over after its commit

		p1, err := replay.Page(ctx, db.st, job.ID, "", 3)
		p1Events := rec.events()
		if err != nil || p1.Replayed != 3 || p1.Failed != 0 || p1.TotalReplayed != 3 || p1.Done || len(p1Events) != 3 || p1.CursorID == "" {
			t.Fatalf("page 1 = %+v, %v", p1, err)
		}
		for i, ev := range evs {
			want := models.EventFailed
			if i < 3 {
				want = models.EventPending
			}
			if got := deliveryStatus(t, db, ev.ID, a.ID); got != want {
				t.Errorf("event %d's delivery to A is %s, want %s", i, got, want)
			}
			if got := deliveryStatus(t, db, ev.ID, b.ID); got != models.EventFailed {
				t.Errorf("event %d's delivery to B is %s: another endpoint was replayed", i, got)
			}
		}
		for _, e := range p1Events {
			if e.RedispatchAt == nil {
				t.Errorf("event %s replayed without a redispatch mark: the sweeper would not reach it", e.ID)
			}
		}

		// The page's deliveries fail again; page 1 is asked again.
		for _, ev := range evs[:3] {
			if err := db.st.SetEventStatus(ctx, db.env, ev.ID, models.EventFailed); err != nil {
				t.Fatal(err)
			}
		}
		rec.take() // the statuses set again above
		again, err := replay.Page(ctx, db.st, job.ID, "", 3)
		if err != nil || again.Replayed != 0 || again.TotalReplayed != 3 || again.CursorID != p1.CursorID || len(rec.events()) != 0 {
			t.Fatalf("page 1 again = %+v, %v", again, err)
		}
		for _, ev := range evs[:3] {
			if got := deliveryStatus(t, db, ev.ID, a.ID); got != models.EventFailed {
				t.Errorf("a retried page replayed %s again (%s)", ev.ID, got)
			}
		}

		p2, err := replay.Page(ctx, db.st, job.ID, p1.CursorID, 3)
		if err != nil || p2.Replayed != 3 || p2.TotalReplayed != 6 || p2.Done {
			t.Fatalf("page 2 = %+v, %v", p2, err)
		}
		p3, err := replay.Page(ctx, db.st, job.ID, p2.CursorID, 3)
		if err != nil || p3.Replayed != 1 || p3.TotalReplayed != 7 || p3.Matched != 7 || !p3.Done {
			t.Fatalf("page 3 = %+v, %v", p3, err)
		}
		if got := deliveryStatus(t, db, late.ID, a.ID); got != models.EventFailed {
			t.Errorf("an event written after the job was replayed (%s)", got)
		}
		row, err := db.st.ReplayJob(ctx, db.env, job.ID)
		if err != nil || row.Status != models.ReplayJobDone || row.Replayed != 7 || row.Failed != 0 || row.FinishedAt == nil || row.CursorID != p3.CursorID {
			t.Fatalf("job row = %+v, %v", row, err)
		}
		// A finished job's page is asked again (the workflow's last answer was lost).
		if done, err := replay.Page(ctx, db.st, job.ID, p2.CursorID, 3); err != nil || done.Replayed != 0 || !done.Done || done.TotalReplayed != 7 {
			t.Fatalf("finished job's page again = %+v, %v", done, err)
		}
	})
}

// A delivery the rules refuse (still in progress) counts as failed and leaves the rest of
// its page replayed; an unknown job is not found.
func TestReplayPageCountsRefusedDeliveries(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
		evs := failedEvents(t, db, 3)
		if err := db.st.SetEventStatus(ctx, db.env, evs[1].ID, models.EventRetrying); err != nil {
			t.Fatal(err)
		}
		job, err := replay.CreateJob(ctx, db.st, db.env, events.Filter{EndpointID: a.ID}, time.Now(), idempotency.Reply[replay.JobObject]{})
		if err != nil || job.Matched != 3 {
			t.Fatalf("job = %+v, %v", job, err)
		}
		p, err := replay.Page(ctx, db.st, job.ID, "", 10)
		if err != nil || p.Replayed != 2 || p.Failed != 1 || !p.Done || p.TotalFailed != 1 {
			t.Fatalf("page = %+v, %v", p, err)
		}
		if got := deliveryStatus(t, db, evs[2].ID, a.ID); got != models.EventPending {
			t.Errorf("the delivery after a refused one is %s, want pending", got)
		}
		if _, err := replay.Page(ctx, db.st, "no-such-job", "", 10); err == nil {
			t.Error("a page of an unknown job succeeded")
		}
	})
}

// A page cut in its middle (its process killed, here its transaction cancelled while a
// replay waits for an event's lock) leaves nothing behind: no delivery replayed, the
// cursor where it was; the page run again does the whole page (PostgreSQL, whose row
// locks let the test stop the page mid-way).
func TestReplayPageCutMidwayDoesNothing(t *testing.T) {
	db := bothDatabases(t, models.EnvSandbox)["postgres"]
	ctx := context.Background()
	a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
	evs := failedEvents(t, db, 4)
	job, err := replay.CreateJob(ctx, db.st, db.env, events.Filter{Status: models.EventFailed}, time.Now(), idempotency.Reply[replay.JobObject]{})
	if err != nil || job.Matched != 4 {
		t.Fatalf("job = %+v, %v", job, err)
	}
	raw := rawPostgres(t, db.url)
	// Another transaction holds the third event's row: the page replays two deliveries,
	// then waits on the third.
	hold := raw.Begin()
	if err := hold.Exec("SELECT id FROM events WHERE id = ? FOR UPDATE", evs[2].ID).Error; err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := replay.Page(cut, db.st, job.ID, "", 10)
		errc <- err
	}()
	for waiting := int64(0); waiting == 0; {
		if err := raw.Raw("SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')").Scan(&waiting).Error; err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled page succeeded")
	}
	hold.Rollback()
	for i, ev := range evs {
		if got := deliveryStatus(t, db, ev.ID, a.ID); got != models.EventFailed {
			t.Errorf("after the cut, event %d's delivery is %s: part of the page stayed", i, got)
		}
	}
	row, err := db.st.ReplayJob(ctx, db.env, job.ID)
	if err != nil || row.Replayed != 0 || row.CursorID != "" || row.Status != models.ReplayJobRunning {
		t.Fatalf("job row after the cut = %+v, %v", row, err)
	}
	p, err := replay.Page(ctx, db.st, job.ID, "", 10)
	if err != nil || p.Replayed != 4 || !p.Done {
		t.Fatalf("page run again = %+v, %v", p, err)
	}
}

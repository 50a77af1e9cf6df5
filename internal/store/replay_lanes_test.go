package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/models"
)

// CONTRACT §26's lock order in a bulk replay page: the page takes its objects' lanes in
// object order before any event, whatever the order of its events. Its first event is
// about object "lane-z", its second about "lane-a"; while a test transaction holds
// lane-a the page waits for it holding nothing — lane-z can be taken at once by another
// (NOWAIT) — where a page taking each event's lane in event order would hold lane-z
// while it waits, and two pages over the same objects in opposite orders would deadlock.
// Once lane-a goes, the page replays both. PostgreSQL: SQLite's writes are serial.
func TestReplayPageTakesLanesInObjectOrder(t *testing.T) {
	db, ok := bothDatabases(t, models.EnvSandbox)["postgres"]
	if !ok {
		t.Skip("PostgreSQL only")
	}
	ctx := context.Background()
	a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
	evs := failedEvents(t, db, 2)
	for i, o := range []string{"lane-z", "lane-a"} {
		exec(t, db, `UPDATE events SET object_id = ? WHERE id = ?`, o, evs[i].ID)
		exec(t, db, `INSERT INTO object_sequences (environment_id, object_id, last_sequence) VALUES (?, ?, 1)`, db.env.ID, o)
	}
	job, err := replay.CreateJob(ctx, db.st, db.env, events.Filter{EndpointID: a.ID, Status: models.EventFailed}, time.Now(),
		idempotency.Reply[replay.JobObject]{})
	if err != nil || job.Matched != 2 {
		t.Fatalf("job = %+v, %v", job, err)
	}

	holder, probe := connect(t, ctx, db.url), connect(t, ctx, db.url)
	hold, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback(ctx) }()
	lockLane := `SELECT object_id FROM object_sequences WHERE environment_id = $1 AND object_id = $2 FOR UPDATE`
	if _, err := hold.Exec(ctx, lockLane, db.env.ID, "lane-a"); err != nil {
		t.Fatal(err)
	}
	type result struct {
		p   replay.PageResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := replay.Page(ctx, db.st, job.ID, "", 10)
		done <- result{p, err}
	}()
	waitForLockWait(t, ctx, probe)

	try, err := probe.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = try.Exec(ctx, lockLane+" NOWAIT", db.env.ID, "lane-z")
	_ = try.Rollback(ctx)
	if err != nil {
		t.Errorf("lane-z is held while the page waits for lane-a: the page takes lanes in event order (%v)", err)
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.p.Replayed != 2 {
		t.Fatalf("page = %+v, %v; want both replayed", r.p, r.err)
	}
}

// connect opens a connection of its own to url, closed when the test ends.
func connect(t *testing.T, ctx context.Context, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// waitForLockWait returns once another backend of the database waits for a lock.
func waitForLockWait(t *testing.T, ctx context.Context, c *pgx.Conn) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		if err := c.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()
			AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("the page never waited for the held lane")
}

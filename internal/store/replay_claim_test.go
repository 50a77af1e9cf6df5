package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// createJobsAtOnce asks for n bulk replay jobs of filter at once (started together once
// all are ready) and returns the jobs made and the refusals.
func createJobsAtOnce(t *testing.T, db seeded, filter events.Filter, n int, started func()) ([]models.ReplayJob, []error) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var made []models.ReplayJob
	var refused []error
	for range n {
		wg.Go(func() {
			j, err := replay.CreateJob(context.Background(), db.st, db.env, filter, time.Now(), idempotency.Reply[replay.JobObject]{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused = append(refused, err)
				return
			}
			made = append(made, j)
		})
	}
	if started != nil {
		started()
	}
	wg.Wait()
	return made, refused
}

// checkTwoMadeRestRefused: exactly MaxRunningReplayJobs jobs made, each matching
// matched deliveries; every other request refused with replay_job_limit.
func checkTwoMadeRestRefused(t *testing.T, made []models.ReplayJob, refused []error, matched int) {
	t.Helper()
	if len(made) != replay.MaxRunningJobs {
		t.Fatalf("%d jobs made, want %d (refusals: %v)", len(made), replay.MaxRunningJobs, refused)
	}
	for _, j := range made {
		if j.Matched != matched || j.Status != models.ReplayJobRunning {
			t.Fatalf("job made: %s matching %d, want running matching %d", j.Status, j.Matched, matched)
		}
	}
	for _, err := range refused {
		if !errors.Is(err, replay.ErrJobLimit) || conflictCode(err) != replay.CodeJobLimit {
			t.Fatalf("refusal = %v, want %s", err, replay.CodeJobLimit)
		}
	}
}

// A bulk replay claims its job slot before it counts the deliveries it matches (CONTRACT
// §21, §17): of many concurrent requests in one environment exactly two make a job, the
// others get replay_job_limit, and the deliveries are counted twice — once per job made,
// never for a refused request.
func TestReplayJobClaimsItsSlotBeforeCounting(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
		failedEvents(t, db, 3)
		var counts atomic.Int64
		if err := db.st.OnReplayCountForTest(func() { counts.Add(1) }); err != nil {
			t.Fatal(err)
		}
		const tries = 40
		made, refused := createJobsAtOnce(t, db, events.Filter{EndpointID: a.ID}, tries, nil)
		checkTwoMadeRestRefused(t, made, refused, 3)
		if got := counts.Load(); got != replay.MaxRunningJobs {
			t.Fatalf("deliveries counted %d times for %d requests, want %d: once per job made", got, tries, replay.MaxRunningJobs)
		}
	})
}

// The same on PostgreSQL with every request past the early check at once: the test holds
// the environment's replay-job lock until all of them wait for it, and none has counted
// by then; once it is released, the first two count and make their jobs and the others,
// seeing two running, are refused without counting.
func TestReplayJobCountsOnlyAfterItsClaimPostgres(t *testing.T) {
	db := bothDatabases(t, models.EnvSandbox)["postgres"]
	a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
	failedEvents(t, db, 2)
	var counts atomic.Int64
	if err := db.st.OnReplayCountForTest(func() { counts.Add(1) }); err != nil {
		t.Fatal(err)
	}
	raw := rawPostgres(t, db.url)
	hold := raw.Begin()
	lock, key := store.ReplayJobsLockForTest(db.env)
	if err := hold.Exec(lock, key).Error; err != nil {
		t.Fatal(err)
	}
	const tries = 8 // within the store's 16 connections: all of them reach the lock
	made, refused := createJobsAtOnce(t, db, events.Filter{EndpointID: a.ID}, tries, func() {
		waitForLockWaiters(t, raw, tries)
		if got := counts.Load(); got != 0 {
			t.Errorf("deliveries counted %d times before any slot was claimed", got)
		}
		if err := hold.Commit().Error; err != nil {
			t.Error(err)
		}
	})
	checkTwoMadeRestRefused(t, made, refused, 2)
	if got := counts.Load(); got != replay.MaxRunningJobs {
		t.Fatalf("deliveries counted %d times for %d requests, want %d", got, tries, replay.MaxRunningJobs)
	}
}

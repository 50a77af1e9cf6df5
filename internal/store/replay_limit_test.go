package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/models"
)

// An environment runs at most two bulk replay jobs (CONTRACT §17): of many concurrent
// requests exactly two make a job and the others get replay_job_limit; another
// environment is not limited by them; once a job ends, a new one may start. Every page
// says how many jobs of its environment run, the share of REVOPS_REPLAY_RATE.
func TestReplayJobLimitPerEnvironment(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
		failedEvents(t, db, 3)
		filter := events.Filter{EndpointID: a.ID}

		const tries = 6
		var wg sync.WaitGroup
		jobs := make(chan models.ReplayJob, tries)
		errs := make(chan error, tries)
		for range tries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				j, err := replay.CreateJob(ctx, db.st, db.env, filter, time.Now(), idempotency.Reply[replay.JobObject]{})
				if err != nil {
					errs <- err
					return
				}
				jobs <- j
			}()
		}
		wg.Wait()
		close(jobs)
		close(errs)
		var made []models.ReplayJob
		for j := range jobs {
			made = append(made, j)
		}
		if len(made) != replay.MaxRunningJobs {
			t.Fatalf("%d jobs made of %d concurrent requests, want %d", len(made), tries, replay.MaxRunningJobs)
		}
		for err := range errs {
			if !errors.Is(err, replay.ErrJobLimit) || conflictCode(err) != replay.CodeJobLimit {
				t.Fatalf("refusal = %v, want %s", err, replay.CodeJobLimit)
			}
		}

		// The live environment of the same organization has its own two.
		live, err := db.st.Environment(ctx, db.env.OrganizationID, models.EnvLive)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := replay.CreateJob(ctx, db.st, live, events.Filter{Status: models.EventFailed}, time.Now(), idempotency.Reply[replay.JobObject]{}); err != nil {
			t.Fatalf("other environment: %v", err)
		}

		// A page tells how many of its environment's jobs run: both, until one ends.
		p, err := replay.Page(ctx, db.st, made[0].ID, "", 10)
		if err != nil || !p.Done || p.Running != 1 {
			t.Fatalf("first job's only page = %+v, %v; want done with 1 job still running", p, err)
		}
		if _, err := replay.CreateJob(ctx, db.st, db.env, filter, time.Now(), idempotency.Reply[replay.JobObject]{}); err != nil {
			t.Fatalf("after a job ended: %v", err)
		}
		third, err := replay.Page(ctx, db.st, made[1].ID, "", 1)
		if err != nil || third.Done || third.Running != 2 {
			t.Fatalf("second job's first page = %+v, %v; want 2 jobs running", third, err)
		}
	})
}

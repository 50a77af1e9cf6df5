package workflows

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// fakePurge stands for the store: rows older than each target's cutoff, taken a batch at
// a time.
type fakePurge struct {
	left  map[string]int
	calls []activities.PurgeInput
}

func (f *fakePurge) PurgeBatch(_ context.Context, in activities.PurgeInput) (activities.PurgeResult, error) {
	f.calls = append(f.calls, in)
	n := min(in.Limit, f.left[in.Target])
	f.left[in.Target] -= n
	return activities.PurgeResult{Rows: n, Deleted: map[string]int64{in.Target: int64(n)}}, nil
}

func retentionEnv(t *testing.T, f *fakePurge) *testsuite.TestWorkflowEnvironment {
	var r *activities.Retention
	return jobEnv(Retention, wire.RetentionWorkflowName, r.PurgeBatch, f.PurgeBatch)
}

// One run empties each target batch by batch — events (with deliveries and attempts) and
// replay jobs older than the retention, idempotency records older than 24 h — and stops
// at the first short batch.
func TestRetentionPurgesEachTargetInBatches(t *testing.T) {
	f := &fakePurge{left: map[string]int{activities.PurgeEvents: 2500, activities.PurgeReplayJobs: 0, activities.PurgeIdempotency: 3}}
	env := retentionEnv(t, f)
	start := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.ExecuteWorkflow(wire.RetentionWorkflowName, wire.RetentionInput{Retention: 720 * time.Hour})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res wire.RetentionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Deleted[activities.PurgeEvents] != 2500 || res.Deleted[activities.PurgeIdempotency] != 3 || res.Deleted[activities.PurgeReplayJobs] != 0 {
		t.Errorf("deleted %v", res.Deleted)
	}
	var got []string
	for _, c := range f.calls {
		want := start.Add(-720 * time.Hour)
		if c.Target == activities.PurgeIdempotency {
			want = start.Add(-24 * time.Hour)
		}
		if !c.Before.Equal(want) || c.Limit != PurgeBatch {
			t.Errorf("%s batch before %v limit %d, want before %v limit %d", c.Target, c.Before, c.Limit, want, PurgeBatch)
		}
		got = append(got, c.Target)
	}
	want := []string{"events", "events", "events", "replay_jobs", "idempotency_keys"}
	if len(got) != len(want) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("batches %v, want %v", got, want)
		}
	}
}

// A long purge continues as new, carrying its cutoff time and the targets it emptied, so
// its history stays small and the next run purges up to the same instant.
func TestRetentionContinuesAsNew(t *testing.T) {
	f := &fakePurge{left: map[string]int{activities.PurgeEvents: 10, activities.PurgeReplayJobs: (batchesPerRun + 5) * PurgeBatch}}
	env := retentionEnv(t, f)
	start := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.ExecuteWorkflow(wire.RetentionWorkflowName, wire.RetentionInput{Retention: 720 * time.Hour})
	var next wire.RetentionInput
	continuedAs(t, env, &next)
	if len(f.calls) != batchesPerRun {
		t.Errorf("%d batches before continuing, want %d", len(f.calls), batchesPerRun)
	}
	if !next.Now.Equal(start) || next.Retention != 720*time.Hour || len(next.Done) != 1 || next.Done[0] != activities.PurgeEvents {
		t.Errorf("continued with %+v, want now %v and events done", next, start)
	}
}

// A retention shorter than the longest retry schedule is refused: nothing is purged.
func TestRetentionRefusesShortRetention(t *testing.T) {
	f := &fakePurge{left: map[string]int{activities.PurgeEvents: 10}}
	env := retentionEnv(t, f)
	env.ExecuteWorkflow(wire.RetentionWorkflowName, wire.RetentionInput{Retention: 24 * time.Hour})
	if err := env.GetWorkflowError(); err == nil {
		t.Fatal("a 24h retention ran")
	}
	if len(f.calls) != 0 {
		t.Errorf("%d batches ran", len(f.calls))
	}
}

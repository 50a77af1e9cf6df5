package activities_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
	"github.com/revops/revops/internal/store"
)

// purgeStore answers every purge with the same batch and remembers the calls.
type purgeStore struct {
	batch store.Purged
	calls []string
}

func (p *purgeStore) purge(target string) (store.Purged, error) {
	p.calls = append(p.calls, target)
	return p.batch, nil
}
func (p *purgeStore) PurgeEvents(context.Context, time.Time, int) (store.Purged, error) {
	return p.purge("events")
}
func (p *purgeStore) PurgeReplayJobs(context.Context, time.Time, int) (store.Purged, error) {
	return p.purge("replay_jobs")
}
func (p *purgeStore) PurgeIdempotencyKeys(context.Context, time.Time, int) (store.Purged, error) {
	return p.purge("idempotency_keys")
}

// A batch reaches the store function of its target and counts what it deleted, per
// table, in revops_retention_rows_purged_total.
func TestPurgeBatchCountsRowsPurged(t *testing.T) {
	const series = `revops_retention_rows_purged_total{table="delivery_attempts"}`
	before, _ := metricstest.Scrape(t).Lookup(t, series)
	ps := &purgeStore{batch: store.Purged{Rows: 2, Deleted: map[string]int64{"events": 2, "delivery_attempts": 7}}}
	r := &activities.Retention{Store: ps}
	res, err := r.PurgeBatch(context.Background(), activities.PurgeInput{Target: activities.PurgeEvents, Before: time.Now(), Limit: 1000})
	if err != nil || res.Rows != 2 || res.Deleted["delivery_attempts"] != 7 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if after := metricstest.Scrape(t).Value(t, series); after-before != 7 {
		t.Errorf("%s grew by %v, want 7", series, after-before)
	}
	for _, target := range []string{activities.PurgeReplayJobs, activities.PurgeIdempotency} {
		if _, err := r.PurgeBatch(context.Background(), activities.PurgeInput{Target: target, Before: time.Now(), Limit: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ps.calls; len(got) != 3 || got[0] != "events" || got[1] != "replay_jobs" || got[2] != "idempotency_keys" {
		t.Errorf("store calls %v", got)
	}
}

// A malformed batch is a permanent fault: retrying cannot fix it.
func TestPurgeBatchRefusesBadInput(t *testing.T) {
	r := &activities.Retention{Store: &purgeStore{}}
	for _, in := range []activities.PurgeInput{
		{Target: "usage_events", Before: time.Now(), Limit: 1000},
		{Target: activities.PurgeEvents, Before: time.Now(), Limit: 0},
	} {
		_, err := r.PurgeBatch(context.Background(), in)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || !appErr.NonRetryable() {
			t.Errorf("%+v: %v, want a non-retryable error", in, err)
		}
	}
}

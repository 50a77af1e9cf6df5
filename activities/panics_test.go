package activities_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// secretRow stands for a tenant's data in a panic's value.
const secretRow = "acct-secret-4242"

// panicking panics on every page of every job it serves.
type panicking struct{ meters.Store }

func (panicking) ReplayPage(context.Context, string, string, int) (replay.PageResult, error) {
	panic("replay of " + secretRow)
}

func (panicking) PurgeMeterPage(context.Context, string, int) (int, error) {
	panic("purge of " + secretRow)
}

func (panicking) EndMeterPurge(context.Context, string) error { return nil }

func (panicking) SkipDeletedEndpointPage(context.Context, string, string, int, store.DeliveryUpdate) (int, error) {
	panic("deliveries of " + secretRow)
}

func (panicking) EndEndpointDeletion(context.Context, string) error { return nil }

func (panicking) PurgeEvents(context.Context, time.Time, int) (store.Purged, error) {
	panic("events of " + secretRow)
}

func (panicking) PurgeReplayJobs(context.Context, time.Time, int) (store.Purged, error) {
	return store.Purged{}, nil
}

func (panicking) PurgeIdempotencyKeys(context.Context, time.Time, int) (store.Purged, error) {
	return store.Purged{}, nil
}

func (panicking) MeterByID(context.Context, string) (models.Meter, error) {
	return models.Meter{ID: "meter-1", EnvironmentID: "env-poisoned"}, nil
}

func (panicking) InTx(context.Context, models.Env, func(*store.Tx) error) ([]models.Event, error) {
	var row map[string]string
	row[secretRow] = "x" // a runtime error on the environment's data
	return nil, nil
}

// CONTRACT §21: a page of a tenant's job (a meter's backfill or purge, a bulk replay, a
// deleted endpoint's deliveries) or
// a retention batch that panics answers a retryable error of type "panic", whose retry
// waits for the activity's RetryPolicy (no NextRetryDelay: never at once), whose text
// names where (and, for a backfill page, the environment) but never the panic's value;
// each is counted under its where.
func TestPagePanicsAnswerRetryableErrors(t *testing.T) {
	var p panicking
	backfill := &activities.MeterBackfill{Store: p}
	purge := &activities.MeterPurge{Store: p}
	bulk := &activities.BulkReplay{Pages: p}
	retention := &activities.Retention{Store: p}
	deletion := &activities.EndpointDeletion{Store: p}
	for _, tc := range []struct {
		where string
		run   any
		in    any
		names string
	}{
		{"meter_backfill_page", backfill.BackfillMeterPage, activities.MeterBackfillPageInput{MeterID: "meter-1"}, "environment env-poisoned: "},
		{"meter_purge_page", purge.PurgeMeterPage, activities.MeterPurgeInput{MeterID: "meter-1"}, ""},
		{"endpoint_deletion_page", deletion.SkipDeletedEndpointPage, activities.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"}, ""},
		{"replay_page", bulk.ReplayPage, activities.ReplayPageInput{JobID: "job-1", Limit: 10}, ""},
		{"retention_batch", retention.PurgeBatch, activities.PurgeInput{Target: activities.PurgeEvents, Limit: 10}, ""},
	} {
		t.Run(tc.where, func(t *testing.T) {
			series := `revops_panics_recovered_total{where="` + tc.where + `"}`
			before := metricstest.Scrape(t).Value(t, series)
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(tc.run)
			_, err := env.ExecuteActivity(tc.run, tc.in)
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != activities.ErrTypePanic {
				t.Fatalf("answer %v, want an application error of type %q", err, activities.ErrTypePanic)
			}
			if appErr.NonRetryable() || appErr.NextRetryDelay() != 0 {
				t.Errorf("non-retryable %v, next retry %v: want the retry policy's backoff", appErr.NonRetryable(), appErr.NextRetryDelay())
			}
			if msg := appErr.Error(); strings.Contains(msg, secretRow) || !strings.Contains(msg, tc.names+"panic in "+tc.where) {
				t.Errorf("message %q: want %q and no value", msg, tc.names+"panic in "+tc.where)
			}
			if got := metricstest.Scrape(t).Value(t, series) - before; got != 1 {
				t.Errorf("%v panics counted, want 1", got)
			}
		})
	}
}

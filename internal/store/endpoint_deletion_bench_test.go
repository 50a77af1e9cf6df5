package store_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// BenchmarkEndpointDeletion measures the deletion of an endpoint whose dead receiver left
// REVOPS_DELETE_BACKLOG (default 60,000) deliveries retrying (CONTRACT §21, issue 41),
// on PostgreSQL, in one sitting:
//
//   - the DELETE (webhook.DeleteEndpoint, the API's and the dashboard's transaction) of
//     an endpoint with 10 such deliveries — the baseline — and of one with the backlog;
//   - the DELETE as it was before issue 41, every event locked by one statement in the
//     request (DeleteEndpointBeforeIssue41ForTest), with the same backlog;
//   - the deletion's job ending that backlog skipped, page by page (the activity's store
//     call, without Temporal): its time and each page's;
//   - environment B's changes (an account and its event, delivered to B's endpoint) alone,
//     then while the job runs.
//
// Never with -race:
//
//	go test ./internal/store -run '^$' -bench EndpointDeletion -benchtime 1x
func BenchmarkEndpointDeletion(b *testing.B) {
	postgresOnly(b)
	backlog := envInt("REVOPS_DELETE_BACKLOG", 60_000)
	for b.Loop() {
		url := testdb.URL(b)
		st := testdb.Open(b, url)
		db := seeded{st: st, env: testdb.Seed(b, st, models.EnvLive), url: url}
		envB, err := db.st.Environment(context.Background(), db.env.OrganizationID, models.EnvSandbox)
		if err != nil {
			b.Fatal(err)
		}
		dbB := seeded{st: db.st, env: envB, url: db.url}
		newEndpoint(b, dbB, "https://b.example/", nil, true)
		small := newEndpoint(b, db, "https://small.example/", nil, true)
		after := newEndpoint(b, db, "https://after.example/", nil, true)
		before := newEndpoint(b, db, "https://before.example/", nil, true)
		raw := testdb.Raw(b, "postgres", db.url)
		seedStart := time.Now()
		webhooktest.SeedBacklog(b, raw, db.env, small.ID, 10)
		webhooktest.SeedBacklog(b, raw, db.env, after.ID, backlog)
		webhooktest.SeedBacklog(b, raw, db.env, before.ID, backlog)
		b.Logf("seeded 10 + 2 × %d retrying deliveries in %s", backlog, time.Since(seedStart).Round(time.Second))

		timed := func(what string, f func() error) time.Duration {
			start := time.Now()
			if err := f(); err != nil {
				b.Fatalf("%s: %v", what, err)
			}
			return time.Since(start)
		}
		del := func(id string) func() error {
			return func() error {
				_, err := webhook.DeleteEndpoint(context.Background(), db.st, db.env, id, idempotency.Reply[webhook.DeletedEndpoint]{})
				return err
			}
		}
		tSmall := timed("DELETE with 10", del(small.ID))
		tAfter := timed("DELETE with the backlog", del(after.ID))
		tBefore := timed("DELETE before issue 41", func() error {
			return db.st.DeleteEndpointBeforeIssue41ForTest(context.Background(), db.env, before.ID)
		})

		alone := changesOfB(b, dbB, 50, nil)
		var jobDone atomic.Bool
		during := make(chan []float64)
		go func() { during <- changesOfB(b, dbB, 0, &jobDone) }()
		var pages []float64
		jobStart := time.Now()
		for {
			start := time.Now()
			n, err := webhook.SkipDeletedEndpointPage(context.Background(), db.st.OnJobsPool(), db.env.ID, after.ID, webhook.DeletionRows)
			if err != nil {
				b.Fatal(err)
			}
			pages = append(pages, ms(time.Since(start)))
			if n < webhook.DeletionRows {
				break
			}
		}
		tJob := time.Since(jobStart)
		jobDone.Store(true)
		meanwhile := <-during
		var left int64
		if err := db.st.CountForTest(context.Background(), "webhook_deliveries", "endpoint_id = ? AND status IN ('pending', 'retrying')", after.ID, &left); err != nil || left != 0 {
			b.Fatalf("%d deliveries left unfinished by the job (%v)", left, err)
		}

		slices.Sort(pages)
		b.ReportMetric(ms(tSmall), "delete_10_ms")
		b.ReportMetric(ms(tAfter), "delete_backlog_ms")
		b.ReportMetric(ms(tBefore), "delete_before_ms")
		b.ReportMetric(tJob.Seconds(), "job_s")
		b.Logf("DELETE, 10 retrying deliveries: %.1f ms; %d: %.1f ms (×%.2f the 10's); before issue 41, %d: %.0f ms (×%.0f today's)",
			ms(tSmall), backlog, ms(tAfter), ms(tAfter)/ms(tSmall), backlog, ms(tBefore), ms(tBefore)/ms(tAfter))
		b.Logf("job: %d pages of at most %d in %.1f s; page p50 %.0f ms, p99 %.0f ms, max %.0f ms",
			len(pages), webhook.DeletionRows, tJob.Seconds(), pct(pages, 50), pct(pages, 99), pages[len(pages)-1])
		b.Logf("B's change alone: p50 %.1f ms, p99 %.1f ms (%d); during the job: p50 %.1f ms, p99 %.1f ms (%d, ×%.2f at p50)",
			pct(alone, 50), pct(alone, 99), len(alone), pct(meanwhile, 50), pct(meanwhile, 99), len(meanwhile), pct(meanwhile, 50)/pct(alone, 50))
	}
}

// changesOfB makes n changes of B one after the other (n 0: until done is set) and
// returns their times in ms, sorted.
func changesOfB(b *testing.B, db seeded, n int, done *atomic.Bool) []float64 {
	var lat []float64
	for i := 0; (n > 0 && i < n) || (n == 0 && !done.Load()); i++ {
		start := time.Now()
		newAccountEvent(b, db)
		lat = append(lat, ms(time.Since(start)))
	}
	slices.Sort(lat)
	return lat
}

// pct is the p-th percentile of sorted values (0 when there are none).
func pct(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[(len(sorted)*p+99)/100-1]
}

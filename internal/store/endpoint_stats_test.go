package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// rawAttempt is an attempt row as the stats are checked against it.
type rawAttempt struct {
	EndpointID string
	StartedAt  time.Time
	DurationMS int64
	Outcome    string
	Error      string
}

// Property (CONTRACT §23): the stats answer, read from rollups, equals the figures
// computed from the raw attempt rows — counts exactly, p50/p95 as the upper bound of the
// bucket holding the nearest-rank quantile of the raw durations — for random outcomes
// (success, failure, timeout, skipped), durations on and around every bucket bound, start
// times across days, hours and shards, attempts recorded through both record paths
// (PostgreSQL's one statement and the step-by-step one) and written again (a retried
// write counts once). Two endpoints share the events: neither's stats take the other's.
func TestEndpointStatsMatchAttempts(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		rng := rand.New(rand.NewPCG(seed, 33))
		eps := []models.WebhookEndpoint{newEndpoint(t, db, "https://a.example/", nil, true), newEndpoint(t, db, "https://b.example/", nil, true)}
		idle := newEndpoint(t, db, "https://idle.example/", nil, true)
		var deliveries []models.WebhookDelivery
		for range 8 {
			ev := newAccountEvent(t, db)
			byEP := deliveriesByEndpoint(t, db, ev.ID)
			for _, ep := range eps {
				deliveries = append(deliveries, byEP[ep.ID])
			}
		}
		base := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
		const days = 3
		for i := range 400 {
			d := deliveries[rng.IntN(len(deliveries))]
			att := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "run-1", Number: i%6 + 1,
				Trigger: models.TriggerScheduled, DurationMS: randomDuration(rng),
				StartedAt: base.Add(time.Duration(rng.Int64N(int64(days * 24 * time.Hour)))), Outcome: models.AttemptSucceeded}
			status := models.EventDelivered
			switch rng.IntN(4) {
			case 1:
				att.Outcome, att.Error, att.StatusCode, status = models.AttemptFailed, "status 500", 500, models.EventRetrying
			case 2:
				att.Outcome, att.Error, status = models.AttemptFailed, models.AttemptTimeoutPrefix+"30s", models.EventRetrying
				att.DurationMS = 30000 + rng.Int64N(3)
			case 3:
				att.Outcome, att.Error, att.DurationMS, status = models.AttemptSkipped, models.DeliveryEndpointDisabled, 0, models.EventFailed
			}
			if rng.IntN(3) == 0 && d.EndpointID == eps[0].ID {
				att.DeliveryID = "" // the single-endpoint releases' path: the event's delivery to the oldest endpoint
			}
			if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &att, status); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(5) == 0 { // a write whose commit succeeded unseen, retried
				again := att
				if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &again, status); err != nil {
					t.Fatal(err)
				}
			}
		}
		raw := rawAttempts(t, db.name, db)
		for _, ep := range append(eps, idle) {
			for _, q := range []webhook.StatsQuery{
				{From: base, To: base.AddDate(0, 0, days), Window: webhook.StatsWindowHour},
				{From: base, To: base.AddDate(0, 0, days), Window: webhook.StatsWindowDay},
				{From: base.Add(13 * time.Hour), To: base.Add(41 * time.Hour), Window: webhook.StatsWindowHour},
				{From: base.AddDate(0, 0, 1), To: base.AddDate(0, 0, 2), Window: webhook.StatsWindowDay},
			} {
				got, err := webhook.EndpointStats(ctx, db.st, db.env, ep.ID, q)
				if err != nil {
					t.Fatal(err)
				}
				want := expectedStats(raw, ep.ID, q)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("endpoint %s, %s windows from %s to %s:\n got %v\nwant %v", ep.URL, q.Window, q.From, q.To, got, want)
				}
				if ep.ID == idle.ID && len(got) != 0 {
					t.Fatalf("an endpoint without attempts has windows: %v", got)
				}
			}
		}
		// The 24 h success rate's read: the rollups of the hours from since on.
		since := base.Add(47 * time.Hour)
		rates, err := db.st.EndpointSuccessRates(ctx, db.env, []string{eps[0].ID, eps[1].ID, idle.ID}, since)
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range eps {
			var sent, ok int
			for _, a := range raw {
				if a.EndpointID == ep.ID && !a.StartedAt.Before(since) && a.Outcome != models.AttemptSkipped {
					sent++
					if a.Outcome == models.AttemptSucceeded {
						ok++
					}
				}
			}
			if got, want := rates[ep.ID], float64(ok)/float64(sent); sent == 0 || got != want {
				t.Errorf("success rate of %s since %s: %v, want %d/%d", ep.URL, since, got, ok, sent)
			}
		}
		if r, ok := rates[idle.ID]; ok {
			t.Errorf("an endpoint without attempts has a success rate: %v", r)
		}
	})
}

// randomDuration is a duration on a bucket bound, one past it, or anywhere below 40 s.
func randomDuration(rng *rand.Rand) int64 {
	b := models.LatencyBucketsMS[rng.IntN(len(models.LatencyBucketsMS))]
	switch rng.IntN(3) {
	case 0:
		return b
	case 1:
		return b + 1
	}
	return rng.Int64N(40000)
}

// rawAttempts reads every attempt row of the environment behind the store's back.
func rawAttempts(t *testing.T, dialect string, db seeded) []rawAttempt {
	t.Helper()
	var rows []rawAttempt
	if err := testdb.Raw(t, dialect, db.url).Table("delivery_attempts").
		Select("endpoint_id, started_at, duration_ms, outcome, error").
		Where("environment_id = ?", db.env.ID).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

// expectedStats computes q's windows of endpoint id from the raw attempts: sent ones only
// (succeeded or failed), timeouts by their error, quantiles by nearest rank.
func expectedStats(raw []rawAttempt, id string, q webhook.StatsQuery) []webhook.StatsWindow {
	byStart := map[time.Time]*webhook.StatsWindow{}
	durations := map[time.Time][]int64{}
	for _, a := range raw {
		at := a.StartedAt.UTC()
		if a.EndpointID != id || a.Outcome == models.AttemptSkipped || at.Before(q.From) || !at.Before(q.To) {
			continue
		}
		start := at.Truncate(time.Hour)
		end := start.Add(time.Hour)
		if q.Window == webhook.StatsWindowDay {
			start = time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
			end = start.AddDate(0, 0, 1)
		}
		w := byStart[start]
		if w == nil {
			w = &webhook.StatsWindow{Start: start, End: end}
			byStart[start] = w
		}
		w.Attempts++
		if a.Outcome == models.AttemptSucceeded {
			w.Succeeded++
		} else {
			w.Failed++
			if len(a.Error) >= len(models.AttemptTimeoutPrefix) && a.Error[:len(models.AttemptTimeoutPrefix)] == models.AttemptTimeoutPrefix {
				w.Timeouts++
			}
		}
		durations[start] = append(durations[start], a.DurationMS)
	}
	out := make([]webhook.StatsWindow, 0, len(byStart))
	for start, w := range byStart {
		ds := durations[start]
		slices.Sort(ds)
		w.SuccessRate = float64(w.Succeeded) / float64(w.Attempts)
		w.P50MS, w.P95MS = bucketBound(nearestRank(ds, 50)), bucketBound(nearestRank(ds, 95))
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b webhook.StatsWindow) int { return a.Start.Compare(b.Start) })
	return out
}

// nearestRank is the ⌈pct/100 · n⌉-th smallest of the sorted durations (at least the first).
func nearestRank(sorted []int64, pct int) int64 {
	rank := max(1, (pct*len(sorted)+99)/100)
	return sorted[rank-1]
}

// bucketBound is the upper bound of the bucket holding ms; above the last bound, the last.
func bucketBound(ms int64) int64 {
	for _, b := range models.LatencyBucketsMS {
		if ms <= b {
			return b
		}
	}
	return models.LatencyBucketsMS[len(models.LatencyBucketsMS)-1]
}

// TestEndpointReadsCarryTheSuccessRate: the endpoint reads fill health.success_rate_24h
// from the rollups of the last 24 hours (store.SuccessRateSince), and an endpoint with no
// attempt sent in them shows null.
func TestEndpointReadsCarryTheSuccessRate(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		ep := newEndpoint(t, db, "https://rate.example/", nil, true)
		idle := newEndpoint(t, db, "https://idle.example/", nil, true)
		ev := newAccountEvent(t, db)
		d := deliveriesByEndpoint(t, db, ev.ID)[ep.ID]
		now := time.Now().UTC()
		for i, outcome := range []string{models.AttemptSucceeded, models.AttemptFailed, models.AttemptSucceeded, models.AttemptSucceeded, models.AttemptFailed} {
			at := now
			if i == 4 { // before the 24 hours: not counted
				at = store.SuccessRateSince(now).Add(-time.Minute)
			}
			att := models.DeliveryAttempt{EventID: ev.ID, DeliveryID: d.ID, RunID: "run-1", Number: i + 1,
				Trigger: models.TriggerScheduled, DurationMS: 12, StartedAt: at, Outcome: outcome}
			status := models.EventDelivered
			if outcome == models.AttemptFailed {
				att.Error, att.StatusCode, status = "status 500", 500, models.EventRetrying
			}
			if err := webhooktest.RecordAttempt(ctx, db.st, db.env, &att, status); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.st.WebhookEndpointByID(ctx, db.env, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if h := webhook.ToHealthObject(got, now); h.SuccessRate24h == nil || *h.SuccessRate24h != 0.75 {
			t.Fatalf("success_rate_24h of 3 successes in 4 recent attempts: %v", h.SuccessRate24h)
		}
		all, err := db.st.AllWebhookEndpoints(ctx, db.env)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range all {
			h := webhook.ToHealthObject(e, now)
			switch {
			case e.ID == idle.ID && h.SuccessRate24h != nil:
				t.Errorf("an endpoint without attempts has success_rate_24h %v", *h.SuccessRate24h)
			case e.ID == ep.ID && (h.SuccessRate24h == nil || *h.SuccessRate24h != 0.75):
				t.Errorf("the list's success_rate_24h: %v", h.SuccessRate24h)
			}
		}
	})
}

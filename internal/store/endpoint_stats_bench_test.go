package store_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// BenchmarkEndpointStats measures the stats answer (webhook.EndpointStats: the endpoint's
// lookup, the rollups' read, the windows added up) in an environment holding 1M attempts'
// worth of rollups — 16 endpoints, 30 days of hours, 8 shards, 11 attempts a row — and the
// 1M attempt rows themselves (which the answer never reads), beside nine other
// environments' rollups of the same size. p50 and p99 per kind of query, in ms
// (CONTRACT §23's target: p99 ≤ 50 ms). PostgreSQL; never with -race:
//
//	go test ./internal/store -run '^$' -bench EndpointStats -benchtime 1x
//
// REVOPS_STATS_READS (default 500) queries per kind. To see what the layout costs the read
// (the record always writes 8 shards): REVOPS_STATS_SHARDS=n seeds n shards a row-hour
// (the same attempts), REVOPS_STATS_COVERING=1 adds an index covering every count.
func BenchmarkEndpointStats(b *testing.B) {
	postgresOnly(b)
	ctx := context.Background()
	st, env, _ := benchEvents(b, 1)
	db := seeded{st: st, env: env}
	var ids []string
	eps, err := st.AllWebhookEndpoints(ctx, env)
	if err != nil {
		b.Fatal(err)
	}
	for _, ep := range eps {
		ids = append(ids, ep.ID)
	}
	for len(ids) < 16 {
		ids = append(ids, newEndpoint(b, db, fmt.Sprintf("https://%d.example/", len(ids)), nil, true).ID)
	}
	now := time.Now().UTC().Truncate(time.Hour)
	seedStart := time.Now()
	shards := 8
	if v := os.Getenv("REVOPS_STATS_SHARDS"); v != "" {
		if _, err := fmt.Sscan(v, &shards); err != nil || 88%shards != 0 {
			b.Fatalf("REVOPS_STATS_SHARDS=%q: a divisor of 88 (8 shards × 11 attempts)", v)
		}
	}
	attempts := seedStatRollups(b, st, env.ID, ids, now, shards)
	for i := range 9 { // other environments' rollups (the table has no foreign key): ten times the environment's
		seedStatRollups(b, st, fmt.Sprintf("bench-env-%d", i), ids, now, shards)
	}
	seedRawAttempts(b, st, env.ID, ids[0], attempts, now)
	if os.Getenv("REVOPS_STATS_COVERING") != "" {
		if err := st.ExecForTest(ctx, `CREATE INDEX endpoint_stat_rollups_covering ON endpoint_stat_rollups
			(environment_id, endpoint_id, hour_start) INCLUDE (`+strings.Join(append([]string{"attempts", "succeeded", "failed", "timeouts"}, statColumnsForBench()...), ", ")+`)`); err != nil {
			b.Fatal(err)
		}
		if err := st.ExecForTest(ctx, "VACUUM endpoint_stat_rollups"); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.ExecForTest(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d attempts' rollups (and their rows) in %s", attempts, time.Since(seedStart).Round(time.Second))

	reads := 500
	if v := os.Getenv("REVOPS_STATS_READS"); v != "" {
		if _, err := fmt.Sscan(v, &reads); err != nil || reads < 1 {
			b.Fatalf("REVOPS_STATS_READS=%q", v)
		}
	}
	kinds := []struct {
		name string
		q    webhook.StatsQuery
	}{
		{"30d_hourly", webhook.StatsQuery{From: now.Add(-719 * time.Hour), To: now.Add(time.Hour), Window: webhook.StatsWindowHour}},
		{"30d_daily", webhook.StatsQuery{From: now.Truncate(24*time.Hour).AddDate(0, 0, -30), To: now.Truncate(24*time.Hour).AddDate(0, 0, 1), Window: webhook.StatsWindowDay}},
		{"7d_hourly", webhook.StatsQuery{From: now.Add(-167 * time.Hour), To: now.Add(time.Hour), Window: webhook.StatsWindowHour}},
		{"24h_hourly", webhook.StatsQuery{From: now.Add(-23 * time.Hour), To: now.Add(time.Hour), Window: webhook.StatsWindowHour}},
	}
	for b.Loop() {
		var report []string
		for _, k := range kinds {
			lat := make([]float64, 0, reads)
			for i := range reads {
				start := time.Now()
				ws, err := webhook.EndpointStats(ctx, st, env, ids[i%len(ids)], k.q)
				lat = append(lat, float64(time.Since(start).Microseconds())/1000)
				if err != nil || len(ws) == 0 {
					b.Fatalf("%s: %d windows, %v", k.name, len(ws), err)
				}
			}
			slices.Sort(lat)
			p50, p99 := lat[len(lat)/2], lat[(len(lat)*99+99)/100-1]
			b.ReportMetric(p50, k.name+"_p50_ms")
			b.ReportMetric(p99, k.name+"_p99_ms")
			report = append(report, fmt.Sprintf("%s p50 %.2f ms p99 %.2f ms", k.name, p50, p99))
		}
		b.Logf("%d reads per kind: %s", reads, strings.Join(report, "; "))
	}
}

// statColumnsForBench are the latency bucket columns.
func statColumnsForBench() []string {
	cols := make([]string, 0, models.LatencyBuckets)
	for _, b := range models.LatencyBucketsMS {
		cols = append(cols, fmt.Sprintf("le_%dms", b))
	}
	return append(cols, fmt.Sprintf("gt_%dms", models.LatencyBucketsMS[len(models.LatencyBucketsMS)-1]))
}

// seedStatRollups writes 30 days of hourly rollups ending with now's hour for each
// endpoint, 88 attempts an hour over the given shards, and returns how many attempts
// they count.
func seedStatRollups(b *testing.B, st interface {
	ExecForTest(ctx context.Context, sql string, args ...any) error
}, envID string, endpoints []string, now time.Time, shards int) int64 {
	b.Helper()
	const hours, perHour = 720, 88
	k := perHour / shards / 11 // each row: 11 attempts ×k
	err := st.ExecForTest(context.Background(), `INSERT INTO endpoint_stat_rollups (environment_id, endpoint_id, hour_start, shard,
		attempts, succeeded, failed, timeouts, le_50ms, le_100ms, le_250ms, gt_30000ms)
		SELECT ?, ep, h, s, 11 * ?, (9 + (s % 2)) * ?, (2 - (s % 2)) * ?, (1 - (s % 2)) * ?, 5 * ?, 3 * ?, 2 * ?, ?
		FROM unnest(?::text[]) ep,
			generate_series(?::timestamptz - interval '719 hours', ?::timestamptz, interval '1 hour') h,
			generate_series(0, ? - 1) s`, envID, k, k, k, k, k, k, k, k, "{"+strings.Join(endpoints, ",")+"}", now, now, shards)
	if err != nil {
		b.Fatal(err)
	}
	return int64(len(endpoints)) * hours * perHour
}

// seedRawAttempts writes n attempt rows spread over the last 30 days (their delivery and
// event ids are made up: the stats answer never reads them).
func seedRawAttempts(b *testing.B, st interface {
	ExecForTest(ctx context.Context, sql string, args ...any) error
}, envID, endpointID string, n int64, now time.Time) {
	b.Helper()
	err := st.ExecForTest(context.Background(), `INSERT INTO delivery_attempts (id, event_id, environment_id, delivery_id, endpoint_id,
		number, trigger, started_at, duration_ms, outcome, created_at)
		SELECT 'bench-' || i, 'bench-event-' || (i / 6), ?, 'bench-delivery-' || (i / 6), ?, 1 + i % 6, ?,
			?::timestamptz - (i % 2592000) * interval '1 second', i % 400, ?, ?::timestamptz
		FROM generate_series(1, ?) i`, envID, endpointID, models.TriggerScheduled, now, models.AttemptSucceeded, now, n)
	if err != nil {
		b.Fatal(err)
	}
}

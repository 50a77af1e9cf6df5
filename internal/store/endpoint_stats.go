package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// Endpoint stats (CONTRACT §23) are kept as hourly rollups written with each attempt
// record, in its own transaction, so that a stats query never scans attempts. An hour's
// attempts of one endpoint are spread over statShards rows by attempt id: concurrent
// records of one endpoint seldom update the same row, so the rollup does not line the
// endpoint's records up behind one row lock. Only attempts that were sent count
// (succeeded or failed); a skipped attempt sent nothing and is no exchange. Attempts
// recorded before this migration are not counted (no backfill): the stats fill in from
// the upgrade on, and cover everything once the retention period has passed.
func init() {
	register(migration{version: 100, name: "endpoint_stat_rollups", sql: `
CREATE TABLE endpoint_stat_rollups (
	environment_id TEXT NOT NULL,
	endpoint_id TEXT NOT NULL,
	hour_start {{ts}} NOT NULL,
	shard INTEGER NOT NULL,
	attempts BIGINT NOT NULL DEFAULT 0,
	succeeded BIGINT NOT NULL DEFAULT 0,
	failed BIGINT NOT NULL DEFAULT 0,
	timeouts BIGINT NOT NULL DEFAULT 0,
	le_10ms BIGINT NOT NULL DEFAULT 0,
	le_25ms BIGINT NOT NULL DEFAULT 0,
	le_50ms BIGINT NOT NULL DEFAULT 0,
	le_100ms BIGINT NOT NULL DEFAULT 0,
	le_250ms BIGINT NOT NULL DEFAULT 0,
	le_500ms BIGINT NOT NULL DEFAULT 0,
	le_1000ms BIGINT NOT NULL DEFAULT 0,
	le_2500ms BIGINT NOT NULL DEFAULT 0,
	le_5000ms BIGINT NOT NULL DEFAULT 0,
	le_10000ms BIGINT NOT NULL DEFAULT 0,
	le_30000ms BIGINT NOT NULL DEFAULT 0,
	gt_30000ms BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (environment_id, endpoint_id, hour_start, shard)
);
CREATE INDEX endpoint_stat_rollups_hour ON endpoint_stat_rollups (hour_start)`})
}

// statShards is how many rows share an endpoint's hour.
const statShards = 8

// StatHour is an endpoint's attempts that started in one UTC hour, its shards added up.
type StatHour struct {
	HourStart                             time.Time
	Attempts, Succeeded, Failed, Timeouts int64
	Buckets                               [models.LatencyBuckets]int64 // models.LatencyBucketsMS; the last: above
}

// statBucketColumns name the latency bucket columns: le_<bound>ms, and gt_<last>ms (as
// migration 100 wrote them: a bound added to models.LatencyBucketsMS needs a migration).
var statBucketColumns = sync.OnceValue(func() []string {
	cols := make([]string, 0, models.LatencyBuckets)
	for _, b := range models.LatencyBucketsMS {
		cols = append(cols, "le_"+strconv.FormatInt(b, 10)+"ms")
	}
	return append(cols, "gt_"+strconv.FormatInt(models.LatencyBucketsMS[len(models.LatencyBucketsMS)-1], 10)+"ms")
})

// statCountColumns are the columns a record adds to: the counts, then the buckets.
var statCountColumns = sync.OnceValue(func() []string {
	return append([]string{"attempts", "succeeded", "failed", "timeouts"}, statBucketColumns()...)
})

// statBucket is the latency bucket of an attempt lasting ms.
func statBucket(ms int64) int {
	for i, b := range models.LatencyBucketsMS {
		if ms <= b {
			return i
		}
	}
	return len(models.LatencyBucketsMS)
}

// attemptSent tells whether an attempt counts in the stats: it was sent (succeeded or
// failed); a skipped attempt sent nothing.
func attemptSent(a *models.DeliveryAttempt) bool {
	return a.Outcome == models.AttemptSucceeded || a.Outcome == models.AttemptFailed
}

// statArgs are the named parameters an attempt's rollup upsert adds (st_*): whether it
// counts, its hour and shard, and what it adds to each count.
func statArgs(a *models.DeliveryAttempt) map[string]any {
	sent, failed := attemptSent(a), a.Outcome == models.AttemptFailed
	args := map[string]any{
		"st_counted": sent, "st_hour": a.StartedAt.UTC().Truncate(time.Hour), "st_shard": statShard(a.ID),
		"st_attempts": b2i(sent), "st_succeeded": b2i(a.Outcome == models.AttemptSucceeded), "st_failed": b2i(failed),
		"st_timeouts": b2i(failed && strings.HasPrefix(a.Error, models.AttemptTimeoutPrefix)),
	}
	bucket := statBucket(a.DurationMS)
	for i, c := range statBucketColumns() {
		args["st_"+c] = b2i(sent && i == bucket)
	}
	return args
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// statShard spreads an endpoint's attempts over its hour's rows by attempt id.
func statShard(attemptID string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(attemptID))
	return int(h.Sum32() % statShards)
}

// statUpsertTail is the ON CONFLICT clause of a rollup upsert: each count added to.
var statUpsertTail = sync.OnceValue(func() string {
	sets := make([]string, 0, len(statCountColumns()))
	for _, c := range statCountColumns() {
		sets = append(sets, c+" = endpoint_stat_rollups."+c+" + excluded."+c)
	}
	return "ON CONFLICT (environment_id, endpoint_id, hour_start, shard) DO UPDATE SET " + strings.Join(sets, ", ")
})

// statInsertColumns is the column list of a rollup upsert.
func statInsertColumns() string {
	return "environment_id, endpoint_id, hour_start, shard, " + strings.Join(statCountColumns(), ", ")
}

// statRollupCTE is recordFanOutSQL's rollup: the attempt's counts added to its endpoint's
// hour and shard when the attempt was inserted (a retried write adds nothing) and sent.
// The parameters are cast: in INSERT … SELECT their types are not inferred from the columns.
var statRollupCTE = sync.OnceValue(func() string {
	vals := []string{"@env", "d.endpoint_id", "CAST(@st_hour AS TIMESTAMPTZ)", "CAST(@st_shard AS INTEGER)"}
	for _, c := range statCountColumns() {
		vals = append(vals, "CAST(@st_"+c+" AS BIGINT)")
	}
	return `rollup AS (
	INSERT INTO endpoint_stat_rollups (` + statInsertColumns() + `)
	SELECT ` + strings.Join(vals, ", ") + ` FROM d
	WHERE CAST(@st_counted AS BOOLEAN) AND EXISTS (SELECT 1 FROM attempt)
	` + statUpsertTail() + `
	RETURNING 1
)`
})

// statUpsertSQL is the step-by-step record's rollup: one upsert of a new, sent attempt.
var statUpsertSQL = sync.OnceValue(func() string {
	vals := []string{"@env", "@endpoint", "@st_hour", "@st_shard"}
	for _, c := range statCountColumns() {
		vals = append(vals, "@st_"+c)
	}
	return "INSERT INTO endpoint_stat_rollups (" + statInsertColumns() + ") VALUES (" + strings.Join(vals, ", ") + ") " + statUpsertTail()
})

// addAttemptStat adds a newly inserted attempt to its endpoint's rollup (the step-by-step
// record). An attempt without an endpoint (an event of the single-endpoint releases that
// no endpoint took) has no stats to count in.
func addAttemptStat(tx *gorm.DB, env Env, a *models.DeliveryAttempt) error {
	if !attemptSent(a) || a.EndpointID == "" {
		return nil
	}
	args := statArgs(a)
	args["env"], args["endpoint"] = env.ID, a.EndpointID
	if err := tx.Exec(statUpsertSQL(), args).Error; err != nil {
		return fmt.Errorf("add attempt %s to its endpoint's stats: %w", a.ID, err)
	}
	return nil
}

// EndpointStatHours reads an endpoint's rollups of the hours starting in [from, to),
// shards added up, oldest first; hours without an attempt are absent. It reads rollups
// only (one primary-key range), never attempts.
func (s *Store) EndpointStatHours(ctx context.Context, env Env, endpointID string, from, to time.Time) ([]StatHour, error) {
	sums := make([]string, 0, len(statCountColumns()))
	for _, c := range statCountColumns() {
		sums = append(sums, "CAST(SUM("+c+") AS BIGINT)")
	}
	rows, err := s.in(ctx, env).Table("endpoint_stat_rollups").
		Select("hour_start, "+strings.Join(sums, ", ")).
		Where("endpoint_id = ? AND hour_start >= ? AND hour_start < ?", endpointID, from.UTC(), to.UTC()).
		Group("hour_start").Order("hour_start").Rows()
	if err != nil {
		return nil, fmt.Errorf("stats of endpoint %s: %w", endpointID, err)
	}
	defer func() { _ = rows.Close() }()
	var out []StatHour
	for rows.Next() {
		var h StatHour
		dest := []any{&h.HourStart, &h.Attempts, &h.Succeeded, &h.Failed, &h.Timeouts}
		for i := range h.Buckets {
			dest = append(dest, &h.Buckets[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("stats of endpoint %s: %w", endpointID, err)
		}
		h.HourStart = h.HourStart.UTC()
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stats of endpoint %s: %w", endpointID, err)
	}
	return out, nil
}

// EndpointSuccessRates are the success rates (succeeded / sent attempts) of the given
// endpoints over the rollup hours starting at or after since (an hour boundary: the
// caller picks the hours, see SuccessRateSince). An endpoint with no sent attempt
// in them is absent (its rate is null).
func (s *Store) EndpointSuccessRates(ctx context.Context, env Env, endpointIDs []string, since time.Time) (map[string]float64, error) {
	return successRates(s.db.WithContext(ctx), env.ID, endpointIDs, since)
}

// SuccessRateSince is where the rollups of an endpoint's health success_rate_24h begin,
// at now: the 24 hourly rollups ending with the current hour's (the current hour so far
// and the 23 whole hours before it), so between 23 and 24 hours of attempts.
func SuccessRateSince(now time.Time) time.Time {
	return now.UTC().Truncate(time.Hour).Add(-23 * time.Hour)
}

// successRates is EndpointSuccessRates on db (a transaction's, for the endpoint reads
// of the writes).
func successRates(db *gorm.DB, envID string, endpointIDs []string, since time.Time) (map[string]float64, error) {
	out := map[string]float64{}
	if len(endpointIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		EndpointID          string
		Succeeded, Attempts int64
	}
	err := db.Table("endpoint_stat_rollups").
		Select("endpoint_id, CAST(SUM(succeeded) AS BIGINT) AS succeeded, CAST(SUM(attempts) AS BIGINT) AS attempts").
		Where("environment_id = ? AND endpoint_id IN ? AND hour_start >= ?", envID, endpointIDs, since.UTC()).
		Group("endpoint_id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("success rates of endpoints: %w", err)
	}
	for _, r := range rows {
		if r.Attempts > 0 {
			out[r.EndpointID] = float64(r.Succeeded) / float64(r.Attempts)
		}
	}
	return out, nil
}

// purgeStatRollups deletes up to limit rollup rows of hours that ended before before's
// hour began (their attempts are at least that old), oldest first, by the hour index.
// A retention batch: a named exception to InTx, in a transaction of its own.
func (s *Store) purgeStatRollups(ctx context.Context, before time.Time, limit int) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.exempt(tx); err != nil {
			return err
		}
		res := tx.Exec(`DELETE FROM endpoint_stat_rollups WHERE (environment_id, endpoint_id, hour_start, shard) IN (
			SELECT environment_id, endpoint_id, hour_start, shard FROM endpoint_stat_rollups
			WHERE hour_start < ? ORDER BY hour_start LIMIT ?)`, before.UTC().Truncate(time.Hour), limit)
		if res.Error != nil {
			return fmt.Errorf("purge endpoint_stat_rollups: %w", res.Error)
		}
		n = res.RowsAffected
		return nil
	})
	return n, err
}

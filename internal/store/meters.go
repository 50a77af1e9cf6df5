package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// Meters (CONTRACT §18). The figures are kept by a durable consumer of the stored usage
// rows, not in the ingest transaction (docs/meters.md says why):
//
//   - usage_batches.gen is NULL while a batch waits for the consumer; the consumer takes
//     an environment's waiting batches under its usage_cursors row lock, counts their
//     rows into every meter of the environment, and stamps them with the cursor's next
//     generation, in one transaction. A batch is visible to it only once committed, so
//     the order batches commit in (which is not their seq order) does not matter: each
//     is taken exactly once, whenever it commits.
//   - A meter is created under the same lock and records the generation it saw
//     (backfill_gen): batches stamped at or below it were counted without the meter and
//     are its backfill's (MeterBackfill, page by page in seq order, progress in
//     backfill_seq); every other batch is stamped later, by a consumer that sees the meter.
//   - meter_figures keeps each window's figure per account and group: hour (with each of
//     its minutes' figures in slots, so that a transaction writes one row per hour, not
//     one per minute) and day for every aggregation (week and month add up days), week
//     and month too for unique_count, whose distinct values do not add up. meter_member_days
//     keeps a unique_count meter's distinct values per day with the minutes they were seen
//     in, by number: meter_series numbers (meter, account, group), meter_values (meter,
//     value).
func init() {
	register(migration{version: 84, name: "meters", sql: scopedTable("meters", "id", `
	key TEXT NOT NULL,
	description TEXT NOT NULL DEFAULT '',
	filter_metric_name TEXT NOT NULL,
	filter_product TEXT NOT NULL DEFAULT '',
	aggregation TEXT NOT NULL,
	value_key TEXT NOT NULL DEFAULT '',
	group_by TEXT NOT NULL,
	status TEXT NOT NULL,
	backfill_gen BIGINT NOT NULL,
	backfill_seq BIGINT NOT NULL DEFAULT 0,
	backfill_started_at {{ts}},
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL,
	UNIQUE (environment_id, key)
);
CREATE INDEX meters_backfill_unstarted ON meters (created_at) WHERE status = 'backfilling' AND backfill_started_at IS NULL;
CREATE TABLE usage_cursors (
	environment_id TEXT PRIMARY KEY REFERENCES environments(id),
	gen BIGINT NOT NULL
);
CREATE TABLE meter_figures (
	meter_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	window_start {{ts}} NOT NULL,
	account_id TEXT NOT NULL,
	groups TEXT NOT NULL,
	g1 TEXT,
	g2 TEXT,
	g3 TEXT,
	value TEXT NOT NULL,
	slots TEXT NOT NULL DEFAULT '',
	latest_ts {{ts}},
	latest_seq BIGINT NOT NULL DEFAULT 0,
	latest_id TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (meter_id, kind, window_start, account_id, groups)
);
CREATE INDEX meter_figures_account ON meter_figures (meter_id, kind, account_id, window_start);
CREATE TABLE meter_members (
	meter_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	groups TEXT NOT NULL,
	member TEXT NOT NULL,
	day {{ts}} NOT NULL,
	minutes TEXT NOT NULL,
	PRIMARY KEY (meter_id, account_id, groups, member, day)
)`)})
	// usage_batches.gen: batches stored before meters existed read 0 (taken, by no
	// meter: a meter's backfill counts them); new batches are NULL (waiting). On
	// PostgreSQL both steps change only the catalog: no rewrite of a large, live table
	// under an exclusive lock.
	register(migration{version: 85, name: "usage_batches_gen", sql: `
ALTER TABLE usage_batches ADD COLUMN gen BIGINT DEFAULT 0;
ALTER TABLE usage_batches ALTER COLUMN gen DROP DEFAULT`, sqlite: `
ALTER TABLE usage_batches ADD COLUMN gen BIGINT;
UPDATE usage_batches SET gen = 0`})
	// Every consumer transaction rewrites the figures of the hours, days (and, for
	// unique_count, weeks and months) it touched, and the member days it saw again. Half
	// empty pages let PostgreSQL write the new version beside the old one (a HOT update),
	// without new index entries and without leaving the indexes to vacuum. SQLite
	// rewrites rows in place: nothing to set.
	register(migration{version: 87, name: "meter_figures_fillfactor", sql: `
ALTER TABLE meter_figures SET (fillfactor = 50);
ALTER TABLE meter_members SET (fillfactor = 70)`, sqlite: `SELECT 1`})
	// The consumer finds waiting batches through usage_batches_waiting (small: it holds
	// only what the consumer has not taken yet), a backfill pages an environment's batches
	// through usage_batches_env_seq, and both read a batch's rows through
	// usage_events_batch. Built concurrently: usage_events is large and live.
	register(migration{version: 86, name: "meter_consumer_indexes", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS usage_batches_waiting ON usage_batches (environment_id, seq) WHERE gen IS NULL;
CREATE INDEX {{concurrently}} IF NOT EXISTS usage_batches_env_seq ON usage_batches (environment_id, seq);
CREATE INDEX {{concurrently}} IF NOT EXISTS usage_events_batch ON usage_events (batch_seq)`})
	// unique_count members keyed by numbers. The consumer probes and writes one member row
	// per distinct value and day it sees: keyed by meter, account, group and value as text
	// (under PostgreSQL's default collation, whose every comparison goes through strcoll,
	// even C.UTF-8), each cost 4.2 µs to probe and 9.7 µs to upsert beside 270,000 kept
	// rows; keyed by a series number (meter_series: meter, account, group) and a value
	// number (meter_values: meter, distinct value), 1.6 and 3.9 µs. The copy holds
	// meter_members (which only consumers and backfill pages read) for its duration: those
	// wait, ingest and values reads do not.
	register(migration{version: 88, name: "meter_member_days", sql: `
CREATE TABLE meter_series (
	id BIGSERIAL PRIMARY KEY,
	meter_id TEXT COLLATE "C" NOT NULL,
	account_id TEXT COLLATE "C" NOT NULL,
	groups TEXT COLLATE "C" NOT NULL,
	UNIQUE (meter_id, account_id, groups)
);
CREATE TABLE meter_values (
	id BIGSERIAL PRIMARY KEY,
	meter_id TEXT COLLATE "C" NOT NULL,
	value TEXT COLLATE "C" NOT NULL,
	UNIQUE (meter_id, value)
);
CREATE TABLE meter_member_days (
	series BIGINT NOT NULL,
	member BIGINT NOT NULL,
	day INTEGER NOT NULL,
	minutes TEXT NOT NULL,
	PRIMARY KEY (series, member, day)
) WITH (fillfactor = 70);
INSERT INTO meter_series (meter_id, account_id, groups) SELECT DISTINCT meter_id, account_id, groups FROM meter_members;
INSERT INTO meter_values (meter_id, value) SELECT DISTINCT meter_id, member FROM meter_members;
INSERT INTO meter_member_days SELECT s.id, v.id, FLOOR(EXTRACT(EPOCH FROM m.day) / 86400)::INTEGER, m.minutes FROM meter_members m
	JOIN meter_series s ON s.meter_id = m.meter_id AND s.account_id = m.account_id AND s.groups = m.groups
	JOIN meter_values v ON v.meter_id = m.meter_id AND v.value = m.member;
DROP TABLE meter_members;
ANALYZE meter_series, meter_values, meter_member_days`, sqlite: `
CREATE TABLE meter_series (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	meter_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	groups TEXT NOT NULL,
	UNIQUE (meter_id, account_id, groups)
);
CREATE TABLE meter_values (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	meter_id TEXT NOT NULL,
	value TEXT NOT NULL,
	UNIQUE (meter_id, value)
);
CREATE TABLE meter_member_days (
	series BIGINT NOT NULL,
	member BIGINT NOT NULL,
	day INTEGER NOT NULL,
	minutes TEXT NOT NULL,
	PRIMARY KEY (series, member, day)
);
INSERT INTO meter_series (meter_id, account_id, groups) SELECT DISTINCT meter_id, account_id, groups FROM meter_members;
INSERT INTO meter_values (meter_id, value) SELECT DISTINCT meter_id, member FROM meter_members;
INSERT INTO meter_member_days SELECT s.id, v.id, CAST(unixepoch(m.day) AS INTEGER) / 86400, m.minutes FROM meter_members m
	JOIN meter_series s ON s.meter_id = m.meter_id AND s.account_id = m.account_id AND s.groups = m.groups
	JOIN meter_values v ON v.meter_id = m.meter_id AND v.value = m.member;
DROP TABLE meter_members`})
	// usage_cursors.writes counts the transactions that wrote an environment's meter
	// figures: a process keeps the figures it wrote as of that count (figureCache).
	register(migration{version: 89, name: "usage_cursors_writes", sql: `
ALTER TABLE usage_cursors ADD COLUMN writes BIGINT NOT NULL DEFAULT 0`})
	// Bounded meter steps (CONTRACT §21). usage_cursors.part_seq/part_after: a waiting
	// batch too large for one consumer step is applied in parts; rows of part_seq up to
	// part_after (by id) are counted into every meter that existed then. A meter created
	// meanwhile records that part as its own to backfill (backfill_part_seq/after).
	// meters.backfill_as_of is the receipt time of the oldest batch its backfill has not
	// counted, kept by each page, so that as_of costs the same during a backfill as after.
	register(migration{version: 94, name: "meter_step_parts", sql: `
ALTER TABLE usage_cursors ADD COLUMN part_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_cursors ADD COLUMN part_after TEXT NOT NULL DEFAULT '';
ALTER TABLE meters ADD COLUMN backfill_part_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE meters ADD COLUMN backfill_part_after TEXT NOT NULL DEFAULT '';
ALTER TABLE meters ADD COLUMN backfill_as_of {{ts}};
UPDATE meters SET backfill_as_of = (SELECT MIN(b.received_at) FROM usage_batches b WHERE b.environment_id = meters.environment_id
	AND b.seq > meters.backfill_seq AND b.gen IS NOT NULL AND b.gen <= meters.backfill_gen) WHERE status = 'backfilling'`})
	// A backfill page finds the oldest receipt time its meter has left from the previous
	// one onward (usage_batches_env_received), reading about a page of rows, not the
	// environment's history. Built concurrently: usage_batches is live.
	register(migration{version: 95, name: "usage_batches_env_received", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS usage_batches_env_received ON usage_batches (environment_id, received_at)`})
}

// Meters lists an environment's meters, newest first.
func (s *Store) Meters(ctx context.Context, env Env, page Page) ([]models.Meter, bool, error) {
	rows, more, err := paginate[models.Meter](s.in(ctx, env), "meters", page)
	if err != nil {
		return nil, false, fmt.Errorf("meters: %w", err)
	}
	return rows, more, nil
}

// Meter finds an environment's meter by key.
func (s *Store) Meter(ctx context.Context, env Env, key string) (models.Meter, error) {
	return takeRow[models.Meter](s.in(ctx, env), "meter "+key, "key = ?", key)
}

// MeterByID finds a meter of any environment (its backfill's activities).
func (s *Store) MeterByID(ctx context.Context, id string) (models.Meter, error) {
	return takeRow[models.Meter](s.db.WithContext(ctx), "meter "+id, "id = ?", id)
}

// UnstartedBackfills lists backfilling meters created before before whose MeterBackfill
// workflow was not started, oldest first (the sweeper).
func (s *Store) UnstartedBackfills(ctx context.Context, before time.Time, limit int) ([]models.Meter, error) {
	return unstarted[models.Meter](ctx, s.db, "unstarted meter backfills", "created_at", limit,
		"status = ? AND backfill_started_at IS NULL AND created_at < ?", models.MeterBackfilling, before)
}

// MarkBackfillStarted records that a meter's MeterBackfill workflow was started.
func (s *Store) MarkBackfillStarted(ctx context.Context, id string, at time.Time) error {
	return markStarted(ctx, s.db, "meters", "id", "backfill_started_at", id, at, "meter backfill")
}

package store

// Indexes for usage reads at scale (docs/benchmarks.md, "Scale: 10M usage rows, 1M
// events", where each was measured on 10M rows). Built concurrently on PostgreSQL:
// usage_events and usage_rollups are large, live tables; each new index is built before
// the one it replaces is dropped, so reads keep an index throughout.
//
//   - usage_events (environment_id, account_id, created_at, id, timestamp) replaces
//     (environment_id, account_id, timestamp): a customer's rows come out in the list's
//     order (newest first, after a cursor) instead of all of them being sorted, and a
//     from/to range on timestamp is checked in the index, not in the heap.
//   - usage_events (environment_id, timestamp) serves from/to without account_id: the list
//     index alone made PostgreSQL read every row newer than the range.
//   - usage_rollups (environment_id, resolution, period_start, account_id, product,
//     metric_name) replaces (environment_id, resolution, period_start): the summary's own
//     order, and product and metric_name checked in the index.
func init() {
	register(migration{version: 65, name: "usage_scale_indexes", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS usage_events_account_list
	ON usage_events (environment_id, account_id, created_at, id, timestamp);
CREATE INDEX {{concurrently}} IF NOT EXISTS usage_events_time ON usage_events (environment_id, timestamp);
DROP INDEX {{concurrently}} IF EXISTS usage_events_account;
CREATE INDEX {{concurrently}} IF NOT EXISTS usage_rollups_summary
	ON usage_rollups (environment_id, resolution, period_start, account_id, product, metric_name);
DROP INDEX {{concurrently}} IF EXISTS usage_rollups_period`})
}

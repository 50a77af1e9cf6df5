package store

// Indexes for the filters of the event list (GET /v1/events, CONTRACT §9 and §17: served
// by indexes, p99 ≤ 50 ms at 1M events in the environment, for a filter that matches
// almost nothing too). The list is newest first by (created_at, id) after a cursor
// (page.go), so each index leads with the environment and the filter's equality columns
// and ends with created_at, id: PostgreSQL and SQLite walk it backwards from the newest
// matching row and stop after the page, a created range bounds the walk, and a filter
// that matches nothing costs one descent. Without them a type or status filter walked
// events_env_created back from the newest row, reading the environment's whole
// retention window when few rows match (docs/benchmarks.md, "Event filters at 1M
// events (issue 20)").
//
//   - events_env_type: type, alone or with a created range.
//   - events_env_status: status, alone or with a created range.
//   - events_env_type_status: type and status together. Neither index above serves a
//     pair whose parts are each common but whose combination is rare (skipped is common
//     for the types no endpoint subscribes to, and absent from the others): either walk
//     would read all of one part's rows.
//
// object_id is served by events_env_object (environment_id, object_id, created_at, seq),
// a created range alone by events_env_created. Built concurrently on PostgreSQL: events
// is a large, live table.
func init() {
	register(migration{version: 70, name: "events_filter_indexes", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS events_env_type ON events (environment_id, type, created_at, id);
CREATE INDEX {{concurrently}} IF NOT EXISTS events_env_status ON events (environment_id, status, created_at, id);
CREATE INDEX {{concurrently}} IF NOT EXISTS events_env_type_status ON events (environment_id, type, status, created_at, id)`})
}

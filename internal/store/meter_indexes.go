package store

// Indexes of the values query (CONTRACT §21): a page reads its figures in chunks, in the
// order of the answer (window start, then account and group bytewise), each chunk an index
// range that starts after the previous one (FigureQuery.After), so a page reads what it
// returns, never the whole asked range sorted. meter_figures' primary key has that order on
// SQLite, but not on PostgreSQL, whose default collation orders text by language rules:
// meter_figures_order is the same key with its text collated "C". A filter[k] is an equality
// on g1, g2 or g3; each has an index in the same order after it, so a filter reads only the
// figures it keeps (one that matches nothing reads nothing). Built concurrently: the table
// is large and live. TestValuesFilterUsesItsIndex shows the plans.
func init() {
	register(migration{version: 92, name: "meter_figures_values_indexes", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS meter_figures_order ON meter_figures (meter_id, kind, window_start, account_id COLLATE "C", groups COLLATE "C");
CREATE INDEX {{concurrently}} IF NOT EXISTS meter_figures_g1 ON meter_figures (meter_id, kind, g1, window_start, account_id COLLATE "C", groups COLLATE "C");
CREATE INDEX {{concurrently}} IF NOT EXISTS meter_figures_g2 ON meter_figures (meter_id, kind, g2, window_start, account_id COLLATE "C", groups COLLATE "C");
CREATE INDEX {{concurrently}} IF NOT EXISTS meter_figures_g3 ON meter_figures (meter_id, kind, g3, window_start, account_id COLLATE "C", groups COLLATE "C")`, sqlite: `
CREATE INDEX IF NOT EXISTS meter_figures_g1 ON meter_figures (meter_id, kind, g1, window_start, account_id, groups);
CREATE INDEX IF NOT EXISTS meter_figures_g2 ON meter_figures (meter_id, kind, g2, window_start, account_id, groups);
CREATE INDEX IF NOT EXISTS meter_figures_g3 ON meter_figures (meter_id, kind, g3, window_start, account_id, groups)`})
}

package store

// Migrations 97 and 98 of CONTRACT §25: an endpoint's filter, and the endpoints an
// event's filters left out. A constant default adds the column without rewriting the
// table (PostgreSQL 11+): events is a large table.
func init() {
	register(migration{version: 97, name: "webhook_endpoints_filter", sql: `
ALTER TABLE webhook_endpoints ADD COLUMN filter TEXT NOT NULL DEFAULT ''`})
	register(migration{version: 98, name: "events_filtered_endpoint_ids", sql: `
ALTER TABLE events ADD COLUMN filtered_endpoint_ids TEXT NOT NULL DEFAULT '[]'`})
}

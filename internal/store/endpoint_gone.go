package store

func init() {
	// disabled_reason "gone": an endpoint whose receiver answered 410 Gone (CONTRACT §23).
	// PostgreSQL swaps the CHECK (the table holds at most 16 rows per environment: its
	// scan is short). SQLite cannot alter a CHECK; loosening one needs no change of the
	// stored rows, so its schema text is edited in place, as SQLite documents for removing
	// constraints (lang_altertable.html, "other kinds of table schema changes"):
	// writable_schema=RESET reloads this connection's schema, and a throwaway table's DDL
	// bumps the schema cookie so that every other connection reloads it too. Rebuilding the table instead would drop columns that other migrations
	// add to it without this one knowing them.
	register(migration{version: 113, name: "webhook_endpoint_disabled_gone", sql: `
ALTER TABLE webhook_endpoints DROP CONSTRAINT IF EXISTS webhook_endpoints_v31_disabled_reason_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_disabled_reason_check
	CHECK (disabled_reason IN ('', 'manual', 'failing', 'gone'))`, sqlite: `
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql, 'CHECK (disabled_reason IN ('''', ''manual'', ''failing''))',
	'CHECK (disabled_reason IN ('''', ''manual'', ''failing'', ''gone''))')
WHERE type = 'table' AND name = 'webhook_endpoints';
PRAGMA writable_schema = RESET;
CREATE TABLE webhook_endpoint_gone_cookie (x INTEGER);
DROP TABLE webhook_endpoint_gone_cookie`})
}

package store

func init() {
	// Receivers' own signals (CONTRACT §23).
	//
	// disabled_reason "gone": an endpoint whose receiver answered 410 Gone. PostgreSQL
	// swaps the CHECK (at most 16 rows per environment: its scan is short). SQLite cannot
	// alter a CHECK; loosening one needs no change of the stored rows, so its schema text
	// is edited in place, as SQLite documents for removing constraints
	// (lang_altertable.html, "other kinds of table schema changes"): writable_schema=RESET
	// reloads this connection's schema, and a throwaway table's DDL bumps the schema
	// cookie so that every other connection reloads it too. Rebuilding the table instead
	// would drop the columns other migrations add to it without this one knowing them.
	//
	// retry_delay_ms: the wait a receiver's Retry-After set before the next attempt, kept
	// on the attempt so that the dashboard shows when the next attempt really comes. A
	// constant default adds the column without rewriting the table on either database.
	register(migration{version: 113, name: "receivers_signals", sql: `
ALTER TABLE delivery_attempts ADD COLUMN retry_delay_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE webhook_endpoints DROP CONSTRAINT IF EXISTS webhook_endpoints_v31_disabled_reason_check;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_disabled_reason_check
	CHECK (disabled_reason IN ('', 'manual', 'failing', 'gone'))`, sqlite: `
ALTER TABLE delivery_attempts ADD COLUMN retry_delay_ms BIGINT NOT NULL DEFAULT 0;
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql, 'CHECK (disabled_reason IN ('''', ''manual'', ''failing''))',
	'CHECK (disabled_reason IN ('''', ''manual'', ''failing'', ''gone''))')
WHERE type = 'table' AND name = 'webhook_endpoints';
PRAGMA writable_schema = RESET;
CREATE TABLE webhook_endpoint_gone_cookie (x INTEGER);
DROP TABLE webhook_endpoint_gone_cookie`})
}

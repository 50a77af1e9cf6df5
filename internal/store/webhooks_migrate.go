package store

// Migrations 31–34 of CONTRACT §13: many endpoints per environment, deliveries, and the data
// of the single-endpoint releases carried over (docs/webhook-endpoints.md).
func init() {
	register(
		// The table is rebuilt on both databases (SQLite cannot drop a UNIQUE constraint):
		// the same statements then hold for both. Nothing references webhook_endpoints.
		migration{version: 31, name: "webhook_endpoints_many", sql: scopedTable("webhook_endpoints_v31", "id", `
	url TEXT NOT NULL,
	method TEXT NOT NULL CHECK (method IN ('POST', 'GET')),
	description TEXT NOT NULL DEFAULT '',
	event_types TEXT NOT NULL DEFAULT '["*"]',
	retry_initial_interval_ms BIGINT NOT NULL DEFAULT 3600000,
	retry_backoff_coefficient DOUBLE PRECISION NOT NULL DEFAULT 1.0,
	retry_maximum_interval_ms BIGINT NOT NULL DEFAULT 3600000,
	retry_maximum_attempts INTEGER NOT NULL DEFAULT 6,
	enabled BOOLEAN NOT NULL,
	disabled_reason TEXT NOT NULL DEFAULT '' CHECK (disabled_reason IN ('', 'manual', 'failing')),
	failing_since {{ts}},
	enabled_at {{ts}},
	secret TEXT NOT NULL,
	previous_secret TEXT NOT NULL DEFAULT '',
	previous_until {{ts}},
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL
);
INSERT INTO webhook_endpoints_v31 (id, organization_id, environment_id, url, method, enabled, disabled_reason,
	enabled_at, secret, previous_secret, previous_until, created_at, updated_at)
SELECT id, organization_id, environment_id, url, method, enabled, CASE WHEN enabled THEN '' ELSE 'manual' END,
	created_at, secret, previous_secret, previous_until, created_at, updated_at
FROM webhook_endpoints;
DROP TABLE webhook_endpoints;
ALTER TABLE webhook_endpoints_v31 RENAME TO webhook_endpoints;
CREATE INDEX webhook_endpoints_env_created ON webhook_endpoints (environment_id, created_at, id)`)},
		migration{version: 32, name: "webhook_deliveries", sql: `
CREATE TABLE webhook_deliveries (
	id TEXT PRIMARY KEY,
	event_id TEXT NOT NULL,
	environment_id TEXT NOT NULL REFERENCES environments(id),
	endpoint_id TEXT NOT NULL,
	status TEXT NOT NULL,
	retry_initial_interval_ms BIGINT NOT NULL,
	retry_backoff_coefficient DOUBLE PRECISION NOT NULL,
	retry_maximum_interval_ms BIGINT NOT NULL,
	retry_maximum_attempts INTEGER NOT NULL,
	last_error TEXT NOT NULL DEFAULT '',
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_event_endpoint ON webhook_deliveries (event_id, endpoint_id);
CREATE INDEX webhook_deliveries_env_endpoint ON webhook_deliveries (environment_id, endpoint_id, status, created_at, id);
CREATE INDEX webhook_deliveries_env_created ON webhook_deliveries (environment_id, created_at, id);
ALTER TABLE delivery_attempts ADD COLUMN delivery_id TEXT NOT NULL DEFAULT '';
ALTER TABLE delivery_attempts ADD COLUMN endpoint_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN redispatch_at {{ts}};
ALTER TABLE replay_jobs ADD COLUMN filter_endpoint_id TEXT NOT NULL DEFAULT ''`},
		// Every event of the single-endpoint releases gets one delivery, to its
		// environment's endpoint, with the event's status; its id is the event's (one per
		// event, and an old run's attempts find it without a lookup).
		migration{version: 33, name: "webhook_deliveries_backfill", sql: `
INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status,
	retry_initial_interval_ms, retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts,
	last_error, created_at, updated_at)
SELECT e.id, e.id, e.environment_id, w.id, e.status, w.retry_initial_interval_ms, w.retry_backoff_coefficient,
	w.retry_maximum_interval_ms, w.retry_maximum_attempts, '', e.created_at, e.updated_at
FROM events e JOIN webhook_endpoints w ON w.environment_id = e.environment_id;
UPDATE delivery_attempts SET delivery_id = event_id,
	endpoint_id = (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.id = delivery_attempts.event_id)
WHERE delivery_id = '' AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = delivery_attempts.event_id)`},
		// Indexes on the live, large tables are built concurrently on PostgreSQL (writes
		// go on meanwhile): automatic disabling reads an endpoint's attempts, the sweeper
		// the events marked for redispatch.
		migration{version: 34, name: "webhook_deliveries_indexes", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS delivery_attempts_endpoint ON delivery_attempts (endpoint_id, started_at);
CREATE INDEX {{concurrently}} IF NOT EXISTS delivery_attempts_delivery ON delivery_attempts (delivery_id, run_id);
CREATE INDEX {{concurrently}} IF NOT EXISTS events_redispatch ON events (redispatch_at) WHERE redispatch_at IS NOT NULL`},
	)
}

package store

// Endpoint health (CONTRACT §23): one row per endpoint, created with it; the endpoints
// already there get theirs here (idle until their next attempt: their past attempts are
// not scanned, the table of attempts having no index by endpoint).
func init() {
	register(migration{version: 96, name: "endpoint_health", sql: `
CREATE TABLE endpoint_health (
	endpoint_id TEXT PRIMARY KEY,
	environment_id TEXT NOT NULL,
	last_attempt_at {{ts}},
	last_success_at {{ts}},
	failing_since {{ts}},
	spell_failed_at {{ts}},
	turned_failing BOOLEAN NOT NULL DEFAULT FALSE,
	failing_announced BOOLEAN NOT NULL DEFAULT FALSE,
	recovery_pending BOOLEAN NOT NULL DEFAULT FALSE,
	recovery_from {{ts}},
	exhausted_until {{ts}},
	exhausted_suppressed INTEGER NOT NULL DEFAULT 0,
	exhausted_delivery_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX endpoint_health_failing ON endpoint_health (failing_since);
CREATE INDEX endpoint_health_exhausted ON endpoint_health (exhausted_until);
INSERT INTO endpoint_health (endpoint_id, environment_id)
SELECT id, environment_id FROM webhook_endpoints`})
}

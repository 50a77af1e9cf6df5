package store

// Usage alerts (CONTRACT §24): the alerts of a meter and their firings, one row per
// (alert, account, group, window start) so that each fires once.
func init() {
	register(migration{version: 104, name: "meter_alerts", sql: scopedTable("meter_alerts", "id", `
	meter_id TEXT NOT NULL,
	threshold TEXT NOT NULL,
	alert_window TEXT NOT NULL,
	account_id TEXT NOT NULL DEFAULT '',
	"group" TEXT NOT NULL DEFAULT '{}',
	description TEXT NOT NULL DEFAULT '',
	created_at {{ts}} NOT NULL
);
CREATE INDEX meter_alerts_meter ON meter_alerts (meter_id, created_at, id);
CREATE TABLE meter_alert_firings (
	alert_id TEXT NOT NULL,
	account_id TEXT NOT NULL,
	groups TEXT NOT NULL,
	window_start {{ts}} NOT NULL,
	environment_id TEXT NOT NULL,
	window_end {{ts}} NOT NULL,
	value TEXT NOT NULL,
	as_of {{ts}} NOT NULL,
	event_id TEXT NOT NULL DEFAULT '',
	created_at {{ts}} NOT NULL,
	PRIMARY KEY (alert_id, account_id, groups, window_start)
);
CREATE INDEX meter_alert_firings_env_window ON meter_alert_firings (environment_id, window_start);
`)})
}

package store

func init() {
	// An endpoint's custom headers (CONTRACT §25), serialized by the model's field: ""
	// for none, on both databases.
	register(migration{version: 102, name: "webhook_endpoint_headers", sql: `
ALTER TABLE webhook_endpoints ADD COLUMN headers TEXT NOT NULL DEFAULT ''`})
}

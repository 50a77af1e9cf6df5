package store

// TEMPORARY (issue 43, branch h43-surface): the columns of the §26 model fields, so that
// this branch's code and tests run before the h43-lanes branch, which owns them (its
// migrations 136..139, with the object_sequences table and the lane index), is merged.
// DELETE THIS FILE WHEN MERGING h43-lanes: the two would add the same columns twice.
func init() {
	register(migration{version: 199, name: "h43_surface_tmp_columns", sql: `
ALTER TABLE events ADD COLUMN sequence BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN ordering TEXT NOT NULL DEFAULT 'none';
ALTER TABLE webhook_deliveries ADD COLUMN object_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN sequence BIGINT;
ALTER TABLE webhook_deliveries ADD COLUMN ordered BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE webhook_deliveries ADD COLUMN waiting_for TEXT NOT NULL DEFAULT ''`})
}

package devstack

import (
	"database/sql"
	"fmt"
	"net/url"

	// The Temporal SQLite plugin already links this driver in; importing it
	// here makes the dependency of sql.Open("sqlite", ...) explicit.
	_ "modernc.org/sqlite"
)

// keptVisibilityIndexes are the executions_visibility indexes that serve
// what a dev stack actually queries: the UI's default list and its filters
// (type, id, status, task queue, parent/root), schedules (namespace division,
// scheduled-by id) and the ten Keyword columns that custom Keyword search
// attributes are mapped onto.
var keptVisibilityIndexes = map[string]bool{
	"default_idx":                    true,
	"by_execution_time":              true,
	"by_workflow_id":                 true,
	"by_workflow_type":               true,
	"by_status":                      true,
	"by_task_queue":                  true,
	"by_parent_workflow_id":          true,
	"by_root_workflow_id":            true,
	"by_temporal_namespace_division": true,
	"by_temporal_scheduled_by_id":    true,
	"by_keyword_01":                  true,
	"by_keyword_02":                  true,
	"by_keyword_03":                  true,
	"by_keyword_04":                  true,
	"by_keyword_05":                  true,
	"by_keyword_06":                  true,
	"by_keyword_07":                  true,
	"by_keyword_08":                  true,
	"by_keyword_09":                  true,
	"by_keyword_10":                  true,
}

// trimVisibilityIndexes drops the other ~40 indexes of the SQLite visibility
// table (one per pre-allocated Int/Double/Bool/Datetime column, per internal
// Temporal column...). Every workflow writes its visibility row three times
// (start, first task completion, close), each write maintaining every index;
// on a 2-core box that made visibility the biggest CPU consumer, and dropping
// them cut total CPU per workflow by about a fifth. Queries on the dropped
// columns still work, by scanning, which is fine at dev-box sizes.
//
// It runs only right after the schema is created, so it never touches a
// database made by something else.
func trimVisibilityIndexes(path string) error {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()

	// sql IS NULL excludes SQLite's implicit primary-key/unique indexes.
	rows, err := db.Query(`SELECT name FROM sqlite_master
		WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("list visibility indexes: %w", err)
	}
	var drop []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		if !keptVisibilityIndexes[name] {
			drop = append(drop, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range drop {
		// Names come from sqlite_master, not from user input.
		if _, err := db.Exec(`DROP INDEX IF EXISTS "` + name + `"`); err != nil {
			return fmt.Errorf("drop visibility index %s: %w", name, err)
		}
	}
	return nil
}

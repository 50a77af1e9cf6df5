package devstack

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// TestPrepareDatabase checks the parts of database preparation that need no
// running server: idempotence and the trimmed visibility indexes.
func TestPrepareDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "temporal.db")
	cfg := sqlConfig(path)
	for i := range 2 {
		if err := prepareDatabase(cfg, "default", []string{"RevopsEventType"}); err != nil {
			t.Fatalf("prepareDatabase #%d: %v", i+1, err)
		}
	}

	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var namespaces int
	if err := db.QueryRow(`SELECT count(*) FROM namespaces WHERE name = 'default'`).Scan(&namespaces); err != nil {
		t.Fatal(err)
	}
	if namespaces != 1 {
		t.Fatalf("namespace rows = %d, want 1", namespaces)
	}
	rows, err := db.Query(`SELECT name FROM sqlite_master
		WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n int
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !keptVisibilityIndexes[name] {
			t.Errorf("index %s should have been dropped", name)
		}
		n++
	}
	if n != len(keptVisibilityIndexes) {
		t.Errorf("visibility indexes = %d, want %d", n, len(keptVisibilityIndexes))
	}
}

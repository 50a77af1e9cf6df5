package devstack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/config"
	sqliteschema "go.temporal.io/server/schema/sqlite"
)

// prepareDatabase creates the schema when the SQLite file does not exist yet
// and makes sure the namespace exists. Both steps are idempotent, so a second
// Start on the same DataDir reuses everything.
//
// The namespace is written straight into the database before the server
// starts (as the Temporal CLI dev server does): every service then loads it
// on boot instead of picking up a RegisterNamespace call on a later refresh.
// A new namespace gets the search attributes right away; attributes added to
// Options later are registered through the operator API (searchattrs.go).
func prepareDatabase(sql *config.SQL, namespace string, searchAttrs []string) error {
	if _, err := os.Stat(sql.DatabaseName); errors.Is(err, fs.ErrNotExist) {
		if err := sqliteschema.SetupSchema(sql); err != nil {
			// A half-created file would be mistaken for a ready database next time.
			removeDatabase(sql.DatabaseName)
			return fmt.Errorf("create temporal schema in %s: %w", sql.DatabaseName, err)
		}
		if err := trimVisibilityIndexes(sql.DatabaseName); err != nil {
			removeDatabase(sql.DatabaseName)
			return fmt.Errorf("trim visibility indexes in %s: %w", sql.DatabaseName, err)
		}
	} else if err != nil {
		return fmt.Errorf("stat temporal database: %w", err)
	}

	attrs := make(map[string]enumspb.IndexedValueType, len(searchAttrs))
	for _, name := range searchAttrs {
		attrs[name] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, attrs)
	if err != nil {
		return fmt.Errorf("build namespace %q: %w", namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(sql, ns); err != nil {
		return fmt.Errorf("create namespace %q: %w", namespace, err)
	}
	return nil
}

func removeDatabase(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		_ = os.Remove(p)
	}
}

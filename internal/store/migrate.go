package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

// migration is one ordered, versioned schema change. Its SQL is written once for both
// databases; the tokens {{ts}}, {{json}}, {{num}} and {{serial}} become the dialect's
// types, and {{concurrently}} becomes CONCURRENTLY on PostgreSQL (nothing on SQLite).
type migration struct {
	version int
	name    string
	sql     string
	// noTx runs the statements one by one outside a transaction on PostgreSQL, as
	// CREATE INDEX CONCURRENTLY requires (it builds an index without blocking writes to a
	// live table). The version is recorded only after the last one succeeds, so a failed
	// or interrupted run is simply run again: every statement must be idempotent (IF NOT
	// EXISTS), and an index a failed concurrent build left INVALID is dropped before its
	// statement is retried. SQLite has no such limit: there it runs in a transaction.
	noTx bool
	// sqlite, when set, is what SQLite runs instead of sql: for a change PostgreSQL makes
	// in a way SQLite lacks (ALTER COLUMN).
	sqlite string
}

var dialectTypes = map[string]*strings.Replacer{
	"postgres": strings.NewReplacer("{{ts}}", "TIMESTAMPTZ", "{{json}}", "JSONB", "{{num}}", "NUMERIC", "{{serial}}", "BIGSERIAL", "{{concurrently}}", "CONCURRENTLY"),
	"sqlite":   strings.NewReplacer("{{ts}}", "DATETIME", "{{json}}", "TEXT", "{{num}}", "NUMERIC", "{{serial}}", "INTEGER", "{{concurrently}}", ""),
}

// migrationLock is the PostgreSQL advisory lock key that serialises migrators.
const migrationLock = 7201452

// Migrate applies every migration not applied yet, in order, each in its own transaction
// (or none, for a noTx one). Concurrent migrators are serialised: on PostgreSQL by a
// session advisory lock held for the whole run, on SQLite by each transaction's write
// lock; each one checks again, under the lock, that its version is still unapplied.
func (s *Store) Migrate(ctx context.Context) (applied []string, err error) {
	return s.migrate(ctx, migrations)
}

func (s *Store) migrate(ctx context.Context, list []migration) (applied []string, err error) {
	// One connection for the whole run: a session advisory lock belongs to the connection
	// that took it.
	err = s.db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		if s.dialect == "postgres" {
			if err := lockMigrations(ctx, conn); err != nil {
				return err
			}
			defer func() {
				// Unlock even when ctx has ended: the connection goes back to the pool.
				if uerr := conn.WithContext(context.WithoutCancel(ctx)).Exec("SELECT pg_advisory_unlock(?)", migrationLock).Error; uerr != nil {
					err = errors.Join(err, fmt.Errorf("unlock migrations: %w", uerr))
				}
			}()
		}
		if s.dialect == "postgres" {
			// Migrations are exempt from the pool's timeouts (CONTRACT §21): an index
			// build may run for minutes, and a table change waits for the transactions
			// before it. Session settings, as the noTx statements run outside any
			// transaction; RESET gives the connection its pool's timeouts back.
			for _, set := range []string{"SET lock_timeout = 0", "SET statement_timeout = 0"} {
				if err := conn.Exec(set).Error; err != nil {
					return fmt.Errorf("lift timeouts: %w", err)
				}
			}
			defer func() {
				for _, reset := range []string{"RESET lock_timeout", "RESET statement_timeout"} {
					if rerr := conn.WithContext(context.WithoutCancel(ctx)).Exec(reset).Error; rerr != nil {
						err = errors.Join(err, fmt.Errorf("restore timeouts: %w", rerr))
					}
				}
			}()
		}
		if err := conn.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ` + dialectTypes[s.dialect].Replace("{{ts}}") + ` NOT NULL)`).Error; err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		have, err := appliedVersions(conn)
		if err != nil {
			return err
		}
		for _, m := range list {
			if have[m.version] {
				continue
			}
			did, err := s.apply(conn, m)
			if err != nil {
				return fmt.Errorf("migration %d %s: %w", m.version, m.name, err)
			}
			if did {
				applied = append(applied, fmt.Sprintf("%04d_%s", m.version, m.name))
			}
		}
		return nil
	})
	return applied, err
}

// lockMigrations takes the migration lock, polling rather than blocking: a session
// blocked in pg_advisory_lock sits in a statement with a snapshot, which a CREATE INDEX
// CONCURRENTLY run by the lock's holder waits for — a deadlock PostgreSQL does not detect.
func lockMigrations(ctx context.Context, conn *gorm.DB) error {
	for {
		var locked bool
		if err := conn.Raw("SELECT pg_try_advisory_lock(?)", migrationLock).Scan(&locked).Error; err != nil {
			return fmt.Errorf("lock migrations: %w", err)
		}
		if locked {
			return nil
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("wait for another migrator: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// lockPoll is how often a migrator waiting for another one tries the lock again.
const lockPoll = 100 * time.Millisecond

// apply runs one migration and records its version; false when another migrator
// recorded it first.
func (s *Store) apply(conn *gorm.DB, m migration) (bool, error) {
	text := m.sql
	if s.dialect == "sqlite" && m.sqlite != "" {
		text = m.sqlite
	}
	stmts := splitStatements(dialectTypes[s.dialect].Replace(text))
	if m.noTx && s.dialect == "postgres" {
		for _, stmt := range stmts {
			if err := dropInvalidIndex(conn, stmt); err != nil {
				return false, err
			}
			if err := conn.Exec(stmt).Error; err != nil {
				return false, err
			}
		}
		stmts = nil
	}
	did := false
	// A migration is a named exception to InTx: schema work in a transaction of its own.
	err := conn.Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n).Error; err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		if n > 0 {
			return nil
		}
		for _, stmt := range stmts {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		if err := tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, time.Now().UTC()).Error; err != nil {
			return fmt.Errorf("record version: %w", err)
		}
		did = true
		return nil
	})
	return did, err
}

var concurrentIndex = regexp.MustCompile(`(?is)^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?("?[A-Za-z_][A-Za-z0-9_]*"?)`)

// dropInvalidIndex drops the index a statement creates concurrently when an earlier,
// failed build left it INVALID: IF NOT EXISTS would otherwise skip it, and the table would
// keep an index that is maintained on every write but never used.
func dropInvalidIndex(conn *gorm.DB, stmt string) error {
	match := concurrentIndex.FindStringSubmatch(stmt)
	if match == nil {
		return nil
	}
	name := strings.Trim(match[1], `"`)
	var invalid int64
	if err := conn.Raw(`SELECT COUNT(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE c.relname = ? AND pg_table_is_visible(c.oid) AND NOT i.indisvalid`, name).Scan(&invalid).Error; err != nil {
		return fmt.Errorf("look for an invalid index %s: %w", name, err)
	}
	if invalid == 0 {
		return nil
	}
	if err := conn.Exec(`DROP INDEX CONCURRENTLY IF EXISTS "` + name + `"`).Error; err != nil {
		return fmt.Errorf("drop invalid index %s left by a failed build: %w", name, err)
	}
	return nil
}

func appliedVersions(db *gorm.DB) (map[int]bool, error) {
	var done []int
	if err := db.Raw("SELECT version FROM schema_migrations").Scan(&done).Error; err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	have := make(map[int]bool, len(done))
	for _, v := range done {
		have[v] = true
	}
	return have, nil
}

// ErrSchemaMismatch is returned by CheckSchema when the database's migrations are not
// exactly the ones this binary knows.
var ErrSchemaMismatch = errors.New("database schema does not match this release")

// CheckSchema tells whether the database holds exactly the migrations this binary knows:
// a process that serves (api, worker, serve) refuses to start on a database that is behind
// (run `revops migrate`) or ahead (a newer release migrated it).
func (s *Store) CheckSchema(ctx context.Context) error {
	return s.checkSchema(ctx, migrations)
}

func (s *Store) checkSchema(ctx context.Context, list []migration) error {
	db := s.db.WithContext(ctx)
	have := map[int]bool{}
	if db.Migrator().HasTable("schema_migrations") {
		var err error
		if have, err = appliedVersions(db); err != nil {
			return err
		}
	}
	var missing, unknown []int
	known := map[int]bool{}
	for _, m := range list {
		known[m.version] = true
		if !have[m.version] {
			missing = append(missing, m.version)
		}
	}
	for v := range have {
		if !known[v] {
			unknown = append(unknown, v)
		}
	}
	slices.Sort(unknown)
	want := 0
	if len(list) > 0 {
		want = list[len(list)-1].version
	}
	at := 0
	for v := range have {
		at = max(at, v)
	}
	switch {
	case len(unknown) > 0:
		return fmt.Errorf("%w: the database is at version %d and has migrations %v this release (schema version %d) does not know; it was migrated by a newer release: run that release, or restore a database of this one",
			ErrSchemaMismatch, at, unknown, want)
	case len(missing) > 0:
		return fmt.Errorf("%w: the database is at version %d, this release needs version %d (missing %v): run `revops migrate` first",
			ErrSchemaMismatch, at, want, missing)
	}
	return nil
}

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int {
	if len(migrations) == 0 {
		return 0
	}
	return migrations[len(migrations)-1].version
}

func splitStatements(sql string) []string {
	var out []string
	for _, s := range strings.Split(sql, ";") {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// register adds migrations; each feature's file calls it from init so the list stays
// next to the code that needs it. Versions must be unique and are applied in order.
func register(ms ...migration) {
	migrations = append(migrations, ms...)
	sortMigrations()
}

var migrations []migration

func sortMigrations() {
	for i := 1; i < len(migrations); i++ {
		for j := i; j > 0 && migrations[j].version < migrations[j-1].version; j-- {
			migrations[j], migrations[j-1] = migrations[j-1], migrations[j]
		}
	}
}

// scopedTable is a CREATE TABLE, on a line of its own, of an environment's rows: its
// key (a TEXT id), then the organization and the environment each row belongs to, which
// every query of it scopes by; the statement goes on with rest (its other columns, and
// whatever follows). The SQL is byte for byte what the migrations wrote out before.
func scopedTable(table, key, rest string) string {
	return "\nCREATE TABLE " + table + " (\n\t" + key + " TEXT PRIMARY KEY," +
		"\n\torganization_id TEXT NOT NULL REFERENCES organizations(id)," +
		"\n\tenvironment_id TEXT NOT NULL REFERENCES environments(id)," + rest
}

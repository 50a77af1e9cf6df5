package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// migration is one ordered, versioned schema change. Its SQL is written once for both
// databases; the tokens {{ts}}, {{json}} and {{num}} become the dialect's types.
type migration struct {
	version int
	name    string
	sql     string
}

var dialectTypes = map[string]*strings.Replacer{
	"postgres": strings.NewReplacer("{{ts}}", "TIMESTAMPTZ", "{{json}}", "JSONB", "{{num}}", "NUMERIC", "{{serial}}", "BIGSERIAL"),
	"sqlite":   strings.NewReplacer("{{ts}}", "DATETIME", "{{json}}", "TEXT", "{{num}}", "NUMERIC", "{{serial}}", "INTEGER"),
}

// Migrate applies every migration not applied yet, in order, in one transaction.
// Concurrent starters on PostgreSQL are serialised by an advisory lock.
func (s *Store) Migrate(ctx context.Context) (applied []string, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == "postgres" {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(7201452)").Error; err != nil {
				return fmt.Errorf("lock migrations: %w", err)
			}
		}
		if err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at ` + dialectTypes[s.dialect].Replace("{{ts}}") + ` NOT NULL)`).Error; err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		var done []int
		if err := tx.Raw("SELECT version FROM schema_migrations").Scan(&done).Error; err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		have := map[int]bool{}
		for _, v := range done {
			have[v] = true
		}
		for _, m := range migrations {
			if have[m.version] {
				continue
			}
			for _, stmt := range splitStatements(dialectTypes[s.dialect].Replace(m.sql)) {
				if err := tx.Exec(stmt).Error; err != nil {
					return fmt.Errorf("migration %d %s: %w", m.version, m.name, err)
				}
			}
			if err := tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, time.Now().UTC()).Error; err != nil {
				return fmt.Errorf("record migration %d: %w", m.version, err)
			}
			applied = append(applied, fmt.Sprintf("%04d_%s", m.version, m.name))
		}
		return nil
	})
	return applied, err
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

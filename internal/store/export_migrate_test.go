package store

import (
	"context"
	"slices"
)

// ExtraMigration is a migration a test adds after the real ones.
func ExtraMigration(version int, name, sql string, noTx bool) any {
	return migration{version: version, name: name, sql: sql, noTx: noTx}
}

// MigrateWith migrates with extra migrations after the real ones.
func (s *Store) MigrateWith(ctx context.Context, extra ...any) ([]string, error) {
	return s.migrate(ctx, withExtra(extra))
}

// CheckSchemaWith checks the schema against the real migrations and extra ones.
func (s *Store) CheckSchemaWith(ctx context.Context, extra ...any) error {
	return s.checkSchema(ctx, withExtra(extra))
}

func withExtra(extra []any) []migration {
	list := slices.Clone(migrations)
	for _, m := range extra {
		list = append(list, m.(migration))
	}
	return list
}

// TestCount runs a counting query for a test.
func (s *Store) TestCount(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Raw(sql, args...).Scan(&n).Error
	return n, err
}

// MigrateBelow applies the real migrations below version only.
func (s *Store) MigrateBelow(ctx context.Context, version int) ([]string, error) {
	var list []migration
	for _, m := range migrations {
		if m.version < version {
			list = append(list, m)
		}
	}
	return s.migrate(ctx, list)
}

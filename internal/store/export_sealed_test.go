package store

import (
	"context"
	"fmt"
	"strings"
)

// DumpForTest is every row of every table as text, as a backup of the database would
// hold it: what a search for secrets in clear reads (CONTRACT §25).
func (s *Store) DumpForTest(ctx context.Context) (string, error) {
	db := s.db.WithContext(ctx)
	var tables []string
	list := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if s.dialect == "postgres" {
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	if err := db.Raw(list).Scan(&tables).Error; err != nil {
		return "", err
	}
	var out strings.Builder
	for _, table := range tables {
		if s.dialect == "postgres" {
			var rows []string // the whole row cast to text, as pg_dump would write it
			if err := db.Raw(`SELECT t::text FROM "` + table + `" t`).Scan(&rows).Error; err != nil {
				return "", fmt.Errorf("%s: %w", table, err)
			}
			fmt.Fprintln(&out, table, strings.Join(rows, "\n"))
			continue
		}
		rows, err := db.Raw(`SELECT * FROM "` + table + `"`).Rows()
		if err != nil {
			return "", fmt.Errorf("%s: %w", table, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				_ = rows.Close()
				return "", err
			}
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fmt.Fprint(&out, v, "|")
			}
			fmt.Fprintln(&out)
		}
		if err := rows.Close(); err != nil {
			return "", err
		}
	}
	return out.String(), nil
}

// SealedMapForTest is a model with a sealed map, as endpoints' custom headers are kept.
type SealedMapForTest struct {
	ID      string            `gorm:"primaryKey"`
	Headers map[string]string `gorm:"serializer:sealed"`
}

// TableName is the test table of SealedMapForTest.
func (SealedMapForTest) TableName() string { return "sealed_maps_test" }

// SealedMapRoundTripForTest writes m in a test table and reads it back.
func (s *Store) SealedMapRoundTripForTest(ctx context.Context, m SealedMapForTest) (SealedMapForTest, error) {
	db := s.db.WithContext(ctx)
	if err := db.Exec(`CREATE TABLE IF NOT EXISTS sealed_maps_test (id TEXT PRIMARY KEY, headers TEXT NOT NULL)`).Error; err != nil {
		return m, err
	}
	if err := db.Create(&m).Error; err != nil {
		return m, err
	}
	var back SealedMapForTest
	err := db.Where("id = ?", m.ID).Take(&back).Error
	return back, err
}

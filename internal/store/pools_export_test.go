package store

import "context"

// ShowForTest reads a setting of a connection of the store's pool (PostgreSQL).
func (s *Store) ShowForTest(ctx context.Context, setting string) (string, error) {
	var v string
	err := s.db.WithContext(ctx).Raw("SELECT current_setting(?)", setting).Scan(&v).Error
	return v, err
}

// SleepForTest runs pg_sleep on the store's pool: a statement as long as d.
func (s *Store) SleepForTest(ctx context.Context, seconds float64) error {
	return s.db.WithContext(ctx).Exec("SELECT pg_sleep(?)", seconds).Error
}

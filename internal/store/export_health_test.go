package store

import (
	"sync"

	"gorm.io/gorm"
)

// StatementsForTest records the SQL of every statement the store runs from now on
// (BEGIN and COMMIT are not statements of GORM's callbacks: a transaction adds two).
func (s *Store) StatementsForTest() (take func() []string, err error) {
	var mu sync.Mutex
	var got []string
	record := func(db *gorm.DB) {
		mu.Lock()
		got = append(got, db.Statement.SQL.String())
		mu.Unlock()
	}
	cb := s.db.Callback()
	for name, p := range map[string]interface {
		Register(string, func(*gorm.DB)) error
	}{
		"query": cb.Query().After("gorm:query"), "row": cb.Row().After("gorm:row"), "raw": cb.Raw().After("gorm:raw"),
		"create": cb.Create().After("gorm:create"), "update": cb.Update().After("gorm:update"), "delete": cb.Delete().After("gorm:delete"),
	} {
		if err := p.Register("test:statements:"+name, record); err != nil {
			return nil, err
		}
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}, nil
}

package webhooktest

import "gorm.io/gorm"

// SQL is a second handle on the test's database, for tests that write, read or lock
// tables directly (seeding meter figures, holding a row lock).
func (d *DB) SQL() *gorm.DB { return d.raw }

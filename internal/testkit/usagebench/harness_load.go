package usagebench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revops/revops/internal/testkit/testdb"
)

// Loader runs a bulk load's statements on one connection, printing each one's time: the
// loads of the scale benchmarks generate their rows inside PostgreSQL (generate_series),
// which is many times faster than sending them.
type Loader struct {
	tb   testing.TB
	ctx  context.Context
	conn *pgxpool.Conn
}

// NewLoader takes a connection of pool for a load, with the session settings that make a
// load faster without changing what is stored (no wait for the WAL flush per statement,
// memory for index builds) and a fixed random seed. Release it when done.
func NewLoader(tb testing.TB, pool *pgxpool.Pool, seed float64) *Loader {
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	l := &Loader{tb: tb, ctx: ctx, conn: conn}
	for _, set := range []string{`SET synchronous_commit = off`, `SET maintenance_work_mem = '512MB'`, `SET work_mem = '256MB'`,
		`SET TimeZone = 'UTC'`} {
		l.Exec(set, set)
	}
	l.Exec("setseed", `SELECT setseed($1)`, seed)
	return l
}

// Release gives the connection back.
func (l *Loader) Release() { l.conn.Release() }

// Exec runs one statement of the load and prints how long it took.
func (l *Loader) Exec(what, sql string, args ...any) {
	t0 := time.Now()
	if _, err := l.conn.Exec(l.ctx, sql, args...); err != nil {
		l.tb.Fatal(fmt.Errorf("%s: %w", what, err))
	}
	fmt.Printf("load: %-40s %6.1f s  load %s\n", what, time.Since(t0).Seconds(), LoadAvg())
}

// DropSecondaryIndexes drops the tables' secondary indexes before a load (loading under
// them is many times slower) and returns the statements that build them again.
func (l *Loader) DropSecondaryIndexes(tables ...string) []string {
	names, defs, err := testdb.SecondaryIndexes(l.ctx, l.conn, tables...)
	if err != nil {
		l.tb.Fatal(err)
	}
	for _, n := range names {
		l.Exec("drop index "+n, `DROP INDEX `+n)
	}
	return defs
}

// Rebuild builds the dropped indexes again from their own definitions and vacuums and
// analyzes the tables: a table that has been live for a while is vacuumed, and
// autovacuum catching up on millions of fresh rows would otherwise run during the
// measurements.
func (l *Loader) Rebuild(defs []string, tables ...string) {
	for _, d := range defs {
		l.Exec(d[:min(len(d), 40)], d)
	}
	for _, t := range tables {
		l.Exec("vacuum analyze "+t, `VACUUM (ANALYZE) `+t)
	}
	l.Exec("checkpoint", `CHECKPOINT`)
}

// UUIDv7Hex is an SQL expression of the 32 hex digits of a UUID v7 of the time ts
// (milliseconds) with the integer n as its random part: loaded ids are time-ordered as
// the ingest's are. It has no %, so that it can be spliced into a format.
func UUIDv7Hex(ts, n string) string {
	return fmt.Sprintf(`lpad(to_hex((extract(epoch FROM %[1]s) * 1000)::bigint), 12, '0') || '7' || lpad(to_hex(mod(%[2]s, 4096)), 3, '0') || '8' || lpad(to_hex(%[2]s), 15, '0')`, ts, n)
}

// UUIDText is an SQL expression of the UUID text of h, 32 hex digits.
func UUIDText(h string) string {
	return fmt.Sprintf(`substr(%[1]s, 1, 8) || '-' || substr(%[1]s, 9, 4) || '-' || substr(%[1]s, 13, 4) || '-' || substr(%[1]s, 17, 4) || '-' || substr(%[1]s, 21, 12)`, h)
}

package store

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/revops/revops/internal/platform/secretbox"
)

// Options bound the store's connections and how long its statements may wait and run
// (CONTRACT §21). On PostgreSQL requests and delivery records draw from one pool and tenant
// jobs (Jobs) from another, so that jobs can never take the connections deliveries need.
type Options struct {
	// Connections is the size of the request pool; JobConnections that of the job pool
	// (PostgreSQL; SQLite keeps one connection, see openSQLite).
	Connections    int
	JobConnections int
	// LockTimeout is the longest a request's statement waits on a lock (then 429
	// lock_timeout); on SQLite it is the busy timeout. StatementTimeout is the longest
	// statement of a request (then 503). Zero sets none.
	LockTimeout      time.Duration
	StatementTimeout time.Duration
	// JobLockTimeout and JobStatementTimeout are the job pool's own bounds (PostgreSQL).
	JobLockTimeout      time.Duration
	JobStatementTimeout time.Duration
	// Keyring seals and opens the secrets the store keeps (sealed.go, CONTRACT §25); nil:
	// none, and a secret can then be neither written nor read sealed.
	Keyring *secretbox.Keyring
	// SealBound is REVOPS_SEAL_BOUND: true writes secrets bound to their row, false in the
	// unbound form the release before reads, nil decides when the store opens (sealForm).
	SealBound *bool
}

// The bounds of tenant jobs. A job page is bounded by rows and bytes and retried by its
// activity, so a job that waits on a lock longer than a request would (5 s) gives up and
// tries again later rather than hold a connection; no page should come near 2 minutes, but
// a statement that does is stopped instead of running on with its locks.
const (
	DefaultJobLockTimeout      = 5 * time.Second
	DefaultJobStatementTimeout = 2 * time.Minute
)

// DefaultOptions are the bounds of CONTRACT §21's defaults (REVOPS_DB_*), for tests and
// tools that do not read the configuration.
func DefaultOptions() Options {
	return Options{
		// On small machines more backends than ~8× cores only queue for CPU and stretch
		// tail latency (docs/benchmarks.md); 16 keeps every core busy, and 16 + 8 per
		// replica fits PostgreSQL's default 100 connections for a few replicas.
		Connections:         16,
		JobConnections:      8,
		LockTimeout:         2 * time.Second,
		StatementTimeout:    30 * time.Second,
		JobLockTimeout:      DefaultJobLockTimeout,
		JobStatementTimeout: DefaultJobStatementTimeout,
	}
}

// withTimeouts sets lock_timeout and statement_timeout as run-time parameters of every
// connection the URL opens: pgx sends URL parameters it does not know in the startup
// message, so the settings hold from a connection's first statement and no code path
// can forget them. A transaction may still change them with SET LOCAL (Exempt).
func withTimeouts(rawURL string, lock, statement time.Duration) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // url.Error would quote the URL, password and all
		}
		return "", fmt.Errorf("parse database URL: %w", err)
	}
	q := u.Query()
	for name, d := range map[string]time.Duration{"lock_timeout": lock, "statement_timeout": statement} {
		if d > 0 {
			q.Set(name, fmt.Sprintf("%dms", max(d.Milliseconds(), 1)))
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// sizePool caps a pool at n connections, all of which may stay open.
func sizePool(db *sql.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
}

// PoolStats are the statistics of the request pool and of the job pool of the store Open
// returned (one pool on SQLite), for metrics and for tests that check jobs never take
// requests' connections.
func (s *Store) PoolStats() (requests, jobs sql.DBStats) {
	return dbStats(s.db), dbStats(s.OnJobsPool().db)
}

func dbStats(db interface{ DB() (*sql.DB, error) }) sql.DBStats {
	sqlDB, err := db.DB()
	if err != nil {
		return sql.DBStats{}
	}
	return sqlDB.Stats()
}

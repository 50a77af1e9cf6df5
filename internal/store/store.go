// Package store is the only place that talks to the database. It receives a *gorm.DB,
// always queries WithContext, checks every error and scopes every query of
// environment data through one helper (scope), so tenant isolation cannot be forgotten.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/models"
)

// Store wraps the database.
type Store struct {
	db      *gorm.DB
	dialect string       // "postgres" or "sqlite"
	figures *figureCache // meter figures this process wrote (nil: none kept)
	fired   *firedCache  // usage alert firings this process knows are recorded
	jobs    *Store       // the same store on the job pool (nil: this is it, or SQLite)
	url     string       // PostgreSQL: for connections outside the pools (ListenOutbox)
	keyring *secretbox.Keyring
	seal    *sealer     // the keyring and the form its statements seal in (sealed.go)
	seam    *seam       // the fan-out and after commit, shared with the job pool (seam.go)
	walk    *laneCursor // where the minute check's stuck-lane walk stopped (lanes_walk.go)
}

// Env is the environment every query is scoped to (models.Env), named short here
// because nearly every store function takes one.
type Env = models.Env

// Open connects to PostgreSQL (postgres:// URL) or opens a SQLite file with the default
// bounds (DefaultOptions): for tests and tools; serving processes use OpenWith.
func Open(ctx context.Context, url string, log *slog.Logger) (*Store, error) {
	return OpenWith(ctx, url, DefaultOptions(), log)
}

// OpenWith connects to PostgreSQL (postgres:// URL) or opens a SQLite file, within the
// bounds o (CONTRACT §21).
func OpenWith(ctx context.Context, url string, o Options, log *slog.Logger) (*Store, error) {
	var (
		s   *Store
		err error
	)
	sl := &sealer{kr: o.Keyring}
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		s, err = openPostgres(url, o, sl)
	} else {
		s, err = openSQLite(url, o, sl)
	}
	if err != nil {
		return nil, err
	}
	s.keyring, s.seal = o.Keyring, sl
	if s.jobs != nil {
		s.jobs.keyring, s.jobs.seal = o.Keyring, sl
	}
	if err := s.Ping(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	if sl.bound, err = s.sealsBound(ctx, o.SealBound); err != nil {
		_ = s.Close()
		return nil, err
	}
	if log != nil {
		log.Debug("database opened", "dialect", s.dialect)
	}
	return s, nil
}

// openPostgres opens the request pool and the job pool, each connection of either with
// its pool's timeouts (withTimeouts).
func openPostgres(url string, o Options, sl *sealer) (*Store, error) {
	db, err := openPool(url, o.Connections, o.LockTimeout, o.StatementTimeout, sl)
	if err != nil {
		return nil, err
	}
	jobDB, err := openPool(url, o.JobConnections, o.JobLockTimeout, o.JobStatementTimeout, sl)
	if err != nil {
		closeDB(db)
		return nil, err
	}
	s := &Store{db: db, dialect: "postgres", figures: &figureCache{}, fired: &firedCache{}, url: url, seam: &seam{}, walk: &laneCursor{}}
	jobs := *s // everything shared (figure cache, seam…) but the pool
	jobs.db = jobDB
	s.jobs = &jobs
	return s, nil
}

func openPool(url string, size int, lock, statement time.Duration, sl *sealer) (*gorm.DB, error) {
	dsn, err := withTimeouts(url, lock, statement)
	if err != nil {
		return nil, err
	}
	return openGorm(postgres.Open(dsn), "postgres", size, sl)
}

// openGorm opens the database d (of kind, for errors) with the store's GORM settings and
// the keyring's callbacks (withKeyring), its pool sized for size connections.
func openGorm(d gorm.Dialector, kind string, size int, sl *sealer) (*gorm.DB, error) {
	db, err := gorm.Open(translating{d}, gormConfig())
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", kind, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("database handle: %w", err)
	}
	if err := withKeyring(db, sl); err != nil {
		closeDB(db)
		return nil, err
	}
	sizePool(sqlDB, size)
	return db, nil
}

// openSQLite opens the file on one connection that requests and jobs share (Jobs is the
// store itself): SQLite has one writer, and a second connection would only wait on the
// first's write lock (SQLITE_BUSY) instead of queueing for it in the pool. SQLite serves
// one process (revops dev); the busy timeout, how long a writer from another process
// waits for the file, is the lock timeout.
func openSQLite(url string, o Options, sl *sealer) (*Store, error) {
	if dir := filepath.Dir(url); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
	}
	// WAL lets readers of other processes (the CLI) read while this one writes.
	dsn := fmt.Sprintf("file:%s?_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_txlock=immediate", url, o.LockTimeout.Milliseconds())
	db, err := openGorm(sqlite.Open(dsn), "sqlite", 1, sl)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, dialect: "sqlite", figures: &figureCache{}, fired: &firedCache{}, seam: &seam{}, walk: &laneCursor{}}, nil
}

func gormConfig() *gorm.Config {
	return &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true, // our writes open their own transactions
		NowFunc:                func() time.Time { return time.Now().UTC() },
		TranslateError:         true, // through translating: timeouts become apperr errors
	}
}

// OnJobsPool is this store on the pool tenant jobs use (backfill and purge pages, bulk
// replay pages, the meter consumer): the same database through a pool of connections
// apart from the one that serves requests and records deliveries, so that jobs never
// take the connections deliveries need, with the jobs' own timeouts (CONTRACT §21). On
// SQLite it is the store itself (one connection, openSQLite).
func (s *Store) OnJobsPool() *Store {
	if s.jobs != nil {
		return s.jobs
	}
	return s
}

// Ping checks the database is reachable.
func (s *Store) Ping(ctx context.Context) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return fmt.Errorf("database handle: %w", err)
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// Close releases the connections of both pools (call it on the store Open returned).
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*Store{s, s.jobs} {
		if st == nil {
			continue
		}
		sqlDB, err := st.db.DB()
		if err == nil {
			err = sqlDB.Close()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func closeDB(db *gorm.DB) {
	if sqlDB, err := db.DB(); err == nil {
		_ = sqlDB.Close()
	}
}

// scope restricts a query to one environment's rows. Every read or write of environment
// data goes through it.
func scope(db *gorm.DB, env Env) *gorm.DB {
	return db.Where("environment_id = ?", env.ID)
}

// in starts a scoped query outside any transaction.
func (s *Store) in(ctx context.Context, env Env) *gorm.DB {
	return scope(s.db.WithContext(ctx), env)
}

// notFound turns GORM's record-not-found into apperr.ErrNotFound with context.
func notFound(err error, what string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return fmt.Errorf("%s: %w", what, apperr.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// isUniqueViolation tells whether err is a unique-constraint failure (both dialects).
func isUniqueViolation(err error) bool {
	return errors.Is(err, gorm.ErrDuplicatedKey)
}

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

	"github.com/revops/revops/internal/apperr"
)

// Store wraps the database.
type Store struct {
	db      *gorm.DB
	dialect string       // "postgres" or "sqlite"
	figures *figureCache // meter figures this process wrote (nil: none kept)
}

// Env identifies the environment a request acts in. Every function reading or writing
// environment data takes one.
type Env struct {
	OrganizationID string
	ID             string
	Name           string // live or sandbox
}

// Open connects to PostgreSQL (postgres:// URL) or opens a SQLite file.
func Open(ctx context.Context, url string, log *slog.Logger) (*Store, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true, // our writes open their own transactions
		NowFunc:                func() time.Time { return time.Now().UTC() },
		TranslateError:         true,
	}
	var (
		db      *gorm.DB
		err     error
		dialect string
	)
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		dialect = "postgres"
		db, err = gorm.Open(postgres.Open(url), cfg)
	} else {
		dialect = "sqlite"
		if dir := filepath.Dir(url); dir != "." {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("create database directory: %w", err)
			}
		}
		// WAL and a busy timeout let the API and the worker share the file.
		dsn := "file:" + url + "?_journal_mode=WAL&_busy_timeout=10000&_foreign_keys=on&_txlock=immediate"
		db, err = gorm.Open(sqlite.Open(dsn), cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("database handle: %w", err)
	}
	if dialect == "sqlite" {
		sqlDB.SetMaxOpenConns(1) // SQLite has one writer; one connection avoids SQLITE_BUSY storms
	} else {
		// On small machines more backends than ~8× cores only queue for CPU and stretch
		// tail latency (docs/benchmarks.md); 16 keeps every core busy.
		sqlDB.SetMaxOpenConns(16)
		sqlDB.SetMaxIdleConns(16)
	}
	s := &Store{db: db, dialect: dialect, figures: &figureCache{}}
	if err := s.Ping(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if log != nil {
		log.Debug("database opened", "dialect", dialect)
	}
	return s, nil
}

// Jobs is the store tenant jobs use (backfill and purge pages, bulk replay pages, the meter
// consumer): the same database through a pool of connections apart from the one that
// serves requests and records deliveries, so that jobs never take the connections
// deliveries need (CONTRACT §21).
func (s *Store) Jobs() *Store {
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

// Close releases the connections.
func (s *Store) Close() error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
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

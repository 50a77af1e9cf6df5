package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/platform/apperr"
)

// translating wraps GORM's dialector so that every error of every GORM call (the
// store opens GORM with TranslateError) also passes through dbError. Embedding the
// dialector's pointer keeps its other methods (savepoints…), which GORM finds by type
// assertion.
type translating struct{ gorm.Dialector }

// Translate is the dialector's own translation (duplicate keys…), then dbError's.
func (d translating) Translate(err error) error {
	if t, ok := d.Dialector.(gorm.ErrorTranslator); ok {
		err = t.Translate(err)
	}
	return dbError(err)
}

// SavePoint and RollbackTo pass GORM's nested transactions to the dialector.
func (d translating) SavePoint(tx *gorm.DB, name string) error {
	return d.Dialector.(gorm.SavePointerDialectorInterface).SavePoint(tx, name)
}

func (d translating) RollbackTo(tx *gorm.DB, name string) error {
	return d.Dialector.(gorm.SavePointerDialectorInterface).RollbackTo(tx, name)
}

// dbError is the one place the database's timeouts become the errors the edge answers
// (CONTRACT §21): a lock waited on past the lock timeout (PostgreSQL 55P03
// lock_not_available, which NOWAIT raises too; SQLite SQLITE_BUSY, its busy timeout run
// out) is an *apperr.BusyError lock_timeout, answered 429 with Retry-After: 1; a
// statement stopped by statement_timeout (57014) is apperr.ErrStatementTimeout, answered
// 503. Either way the statement failed, so its transaction rolls back and nothing
// changed. The cause stays wrapped (errors.As still finds the *pgconn.PgError). Errors it
// already translated, and anything else, pass unchanged.
//
// GORM calls reach it through translating; a transaction that also runs raw queries on
// Statement.ConnPool returns through it too (InTx, WriteUsage).
func dbError(err error) error {
	var sealed *SealError
	if errors.As(err, &sealed) {
		return sealed // without the driver's message, which may quote the plaintext
	}
	var busy *apperr.BusyError
	if err == nil || errors.As(err, &busy) || errors.Is(err, apperr.ErrStatementTimeout) {
		return err
	}
	switch {
	case lockTimedOut(err):
		return apperr.Busy(err, apperr.CodeLockTimeout, time.Second,
			"A row this request needs is locked by another change; nothing was changed.")
	case statementTimedOut(err):
		return fmt.Errorf("%w: %w", apperr.ErrStatementTimeout, err)
	}
	return err
}

func lockTimedOut(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "55P03" // lock_not_available
	}
	var liteErr sqlite3.Error
	return errors.As(err, &liteErr) && liteErr.Code == sqlite3.ErrBusy
}

// statementTimedOut tells a statement the server cancelled (57014 query_canceled): by
// statement_timeout, or by an operator's pg_cancel_backend. A cancelled context is not
// one: pgx ends the wait on its side and reports the context's error.
func statementTimedOut(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "57014" &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// exempt lifts the request pool's timeouts for the rest of tx (PostgreSQL; SET LOCAL ends
// with the transaction): retention and migrations are the operator's work, bounded by
// their batches, not requests (CONTRACT §21).
func (s *Store) exempt(tx *gorm.DB) error {
	if s.dialect != "postgres" {
		return nil
	}
	if err := tx.Exec("SET LOCAL lock_timeout = 0").Error; err != nil {
		return fmt.Errorf("lift lock timeout: %w", err)
	}
	if err := tx.Exec("SET LOCAL statement_timeout = 0").Error; err != nil {
		return fmt.Errorf("lift statement timeout: %w", err)
	}
	return nil
}

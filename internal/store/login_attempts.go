package store

import (
	"fmt"
	"time"
)

func init() {
	// Times are Unix milliseconds: one representation compared the same way by both
	// databases, read back by RETURNING without a driver's time parsing.
	register(migration{version: 41, name: "login_attempts", sql: `
CREATE TABLE login_attempts (
	scope TEXT PRIMARY KEY,
	window_start BIGINT NOT NULL,
	attempts INTEGER NOT NULL
);
CREATE INDEX login_attempts_window ON login_attempts (window_start)`})
}

// LoginWindow is the state of one throttle scope after an attempt was counted.
type LoginWindow struct {
	Attempts int       // attempts in the current window, this one included
	Start    time.Time // when the current window began
}

// The login throttle's counters, written in a transaction of no tenant's
// (InTx(ctx, Unauthenticated, …)): they are keyed by client and email before anyone is
// known. The dashboard decides the limits; the sessions package writes through these.

// CountLoginAttempt counts one login attempt against scope (an email or a client address)
// and returns the window it fell in. A window opens at the first attempt and lasts
// window; the first attempt after it opens a new one. Check and count are one statement,
// so attempts racing on any number of replicas each get a distinct count and no more
// than the limit can pass.
func (tx *Tx) CountLoginAttempt(scope string, now time.Time, window time.Duration) (LoginWindow, error) {
	nowMS, cutoff := now.UnixMilli(), now.Add(-window).UnixMilli()
	var row struct {
		Attempts    int
		WindowStart int64
	}
	err := tx.db.Raw(`
INSERT INTO login_attempts (scope, window_start, attempts) VALUES (?, ?, 1)
ON CONFLICT (scope) DO UPDATE SET
	attempts = CASE WHEN login_attempts.window_start <= ? THEN 1 ELSE login_attempts.attempts + 1 END,
	window_start = CASE WHEN login_attempts.window_start <= ? THEN excluded.window_start ELSE login_attempts.window_start END
RETURNING attempts, window_start`, scope, nowMS, cutoff, cutoff).Scan(&row).Error
	if err != nil {
		return LoginWindow{}, fmt.Errorf("count login attempt: %w", err)
	}
	return LoginWindow{Attempts: row.Attempts, Start: time.UnixMilli(row.WindowStart).UTC()}, nil
}

// UncountLoginAttempt takes back one attempt of scope (a login that succeeded is not a
// guess); it never goes below zero.
func (tx *Tx) UncountLoginAttempt(scope string) error {
	err := tx.db.Exec(
		"UPDATE login_attempts SET attempts = attempts - 1 WHERE scope = ? AND attempts > 0", scope).Error
	if err != nil {
		return fmt.Errorf("uncount login attempt: %w", err)
	}
	return nil
}

// ClearLoginAttempts forgets scope's attempts (the right password ends a run of typos).
func (tx *Tx) ClearLoginAttempts(scope string) error {
	if err := tx.db.Exec("DELETE FROM login_attempts WHERE scope = ?", scope).Error; err != nil {
		return fmt.Errorf("clear login attempts: %w", err)
	}
	return nil
}

// PruneLoginAttempts drops windows that began before before, so addresses and emails
// seen once do not accumulate.
func (tx *Tx) PruneLoginAttempts(before time.Time) error {
	if err := tx.db.Exec("DELETE FROM login_attempts WHERE window_start < ?", before.UnixMilli()).Error; err != nil {
		return fmt.Errorf("prune login attempts: %w", err)
	}
	return nil
}

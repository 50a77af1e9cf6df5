// Package sessions keeps the dashboard's sign-ins (CONTRACT §11, §17): the sessions a
// user holds, the browsers a user signed in on (device tokens), and the login
// throttle's counters. The dashboard decides when to count an attempt and what to refuse;
// every write is a function here, in one transaction (Store.InTx) of the user's
// organization (store.OrgScope), or, for the throttle's counters, which are kept before
// anyone is known, of no tenant's (store.Unauthenticated).
package sessions

import (
	"context"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what sessions need of the database.
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
}

var _ Store = (*store.Store)(nil)

// MaxSessions is how many dashboard sessions a user may hold; a new login ends the
// oldest (CONTRACT §17).
const MaxSessions = 20

// MaxLoginDevices is how many browsers a user is remembered on; signing in on another
// forgets the one first remembered (as MaxSessions).
const MaxLoginDevices = 20

// in runs fn in one transaction of organization orgID.
func in(ctx context.Context, st Store, orgID string, fn func(tx *store.Tx) error) error {
	_, err := st.InTx(ctx, store.OrgScope(orgID), fn)
	return err
}

// Create stores a new session of its user, ending the user's oldest ones past
// MaxSessions; the organization's expired sessions are swept on the way, so the table
// never grows without bound. The user's row is locked, so racing logins cannot leave
// more than MaxSessions.
func Create(ctx context.Context, st Store, sess *models.DashboardSession) error {
	return in(ctx, st, sess.OrganizationID, func(tx *store.Tx) error {
		if err := tx.SweepExpiredSessions(sess.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.LockUser(sess.UserID); err != nil {
			return err
		}
		if err := tx.KeepNewestSessions(sess.UserID, MaxSessions-1); err != nil {
			return err
		}
		return tx.InsertSession(sess)
	})
}

// End ends session id of organization orgID (logout); ending an unknown one is harmless.
func End(ctx context.Context, st Store, orgID, id string) error {
	return in(ctx, st, orgID, func(tx *store.Tx) error { return tx.DeleteSession(id) })
}

// SwitchEnvironment makes session id of organization orgID act in env (live or sandbox).
func SwitchEnvironment(ctx context.Context, st Store, orgID, id, env string) error {
	return in(ctx, st, orgID, func(tx *store.Tx) error { return tx.SetSessionEnvironment(id, env) })
}

// RememberDevice remembers the browser dev for its user, of organization orgID, or, when
// its id is already the user's, moves its expiry to dev's. The user's oldest browsers
// past MaxLoginDevices are forgotten and the organization's expired ones swept on the
// way, under the user's row lock, so the table never grows without bound.
func RememberDevice(ctx context.Context, st Store, orgID string, dev models.LoginDevice) error {
	return in(ctx, st, orgID, func(tx *store.Tx) error {
		if err := tx.SweepExpiredDevices(dev.CreatedAt); err != nil {
			return err
		}
		if _, err := tx.LockUser(dev.UserID); err != nil {
			return err
		}
		if renewed, err := tx.RenewDevice(dev); err != nil || renewed {
			return err
		}
		if err := tx.KeepNewestDevices(dev.UserID, MaxLoginDevices-1); err != nil {
			return err
		}
		return tx.InsertDevice(dev)
	})
}

// CountAttempt counts one login attempt against scope (a client, or a client and an
// email) and returns the window it fell in (store.Tx.CountLoginAttempt).
func CountAttempt(ctx context.Context, st Store, scope string, now time.Time, window time.Duration) (store.LoginWindow, error) {
	var w store.LoginWindow
	_, err := st.InTx(ctx, store.Unauthenticated, func(tx *store.Tx) (err error) {
		w, err = tx.CountLoginAttempt(scope, now, window)
		return err
	})
	return w, err
}

// ClearAttempts forgets scope's attempts (the right password ends a run of typos).
func ClearAttempts(ctx context.Context, st Store, scope string) error {
	_, err := st.InTx(ctx, store.Unauthenticated, func(tx *store.Tx) error { return tx.ClearLoginAttempts(scope) })
	return err
}

// PruneAttempts forgets the windows begun before before, so that addresses and emails
// seen once do not accumulate.
func PruneAttempts(ctx context.Context, st Store, before time.Time) error {
	_, err := st.InTx(ctx, store.Unauthenticated, func(tx *store.Tx) error { return tx.PruneLoginAttempts(before) })
	return err
}

package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"time"

	"github.com/revops/revops/internal/clientaddr"
	"github.com/revops/revops/internal/store"
)

// loginLimit is one throttle rule: at most max attempts per window for one scope.
type loginLimit struct {
	max    int
	window time.Duration
}

var (
	// perEmail slows guessing one user's password to five tries a minute, whatever the
	// number of addresses the guesses come from.
	perEmail = loginLimit{max: 5, window: time.Minute}
	// perClient bounds one client guessing across many emails; higher than perEmail so
	// that colleagues behind one NAT who mistype are not locked out together.
	perClient = loginLimit{max: 20, window: time.Minute}
)

// throttle limits login attempts per email and per client address. Its counters live in
// the database, so every replica sees the same counts, and an attempt is counted before
// its password is checked (one atomic statement), so racing attempts cannot slip past the
// limit together. A successful login is taken back from its client's count and clears its
// email's, as the old in-memory throttle forgot a key after a success.
type throttle struct {
	store *store.Store
	now   func() time.Time
	email loginLimit
	ip    loginLimit
}

func newThrottle(st *store.Store) *throttle {
	return &throttle{store: st, now: time.Now, email: perEmail, ip: perClient}
}

// attempt counts one login attempt of email from client and tells how long to wait when
// it is over a limit (0: it may go ahead).
func (t *throttle) attempt(ctx context.Context, email string, client netip.Addr) (time.Duration, error) {
	now := t.now().UTC()
	var wait time.Duration
	opened := false
	for _, s := range []struct {
		scope string
		limit loginLimit
	}{{emailScope(email), t.email}, {clientScope(client), t.ip}} {
		w, err := t.store.CountLoginAttempt(ctx, s.scope, now, s.limit.window)
		if err != nil {
			return 0, err
		}
		if w.Attempts > s.limit.max {
			wait = max(wait, w.Start.Add(s.limit.window).Sub(now))
		}
		opened = opened || w.Attempts == 1
	}
	if opened {
		// A new window began: a cheap moment to forget windows long over.
		if err := t.store.PruneLoginAttempts(ctx, now.Add(-max(t.email.window, t.ip.window))); err != nil {
			return 0, err
		}
	}
	if wait > 0 && wait < time.Second {
		wait = time.Second
	}
	return wait, nil
}

// succeeded forgets email's attempts and takes this one back from client's count.
func (t *throttle) succeeded(ctx context.Context, email string, client netip.Addr) error {
	if err := t.store.ClearLoginAttempts(ctx, emailScope(email)); err != nil {
		return err
	}
	return t.store.UncountLoginAttempt(ctx, clientScope(client))
}

// emailScope keys an email by its hash: the table then holds no addresses, nor what
// people type by mistake into the email field (their password, often).
func emailScope(email string) string {
	sum := sha256.Sum256([]byte(email))
	return "email:" + hex.EncodeToString(sum[:16])
}

// clientScope keys a client by its address (an IPv6 client by its /64).
func clientScope(ip netip.Addr) string { return "ip:" + clientaddr.Scope(ip) }

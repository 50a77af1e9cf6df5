package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"time"

	"github.com/revops/revops/internal/domain/sessions"
	"github.com/revops/revops/internal/platform/clientaddr"
)

// loginLimit is one throttle rule: at most max attempts per window for one scope.
type loginLimit struct {
	max    int
	window time.Duration
}

var (
	// perClient is a client's budget: every login attempt counts, successful or not, so
	// that neither guessing across many emails nor a stream of logins is free.
	perClient = loginLimit{max: 20, window: time.Minute}
	// perClientEmail slows one client guessing one user's password to five failures a
	// minute. It is the client's own: an attacker's failures for an email never lock
	// the owner, who signs in from elsewhere or from a browser it signed in on before
	// (CONTRACT §17).
	perClientEmail = loginLimit{max: 5, window: time.Minute}
)

// throttle limits login attempts per client, and per client and email (CONTRACT §17). A
// client is a browser that signed in as the user it names before (its device token,
// device.go), or else an address: so the owner's browser keeps a budget of its own, which
// nobody sharing its address can spend. Its counters live in the database, so every
// replica sees the same counts, and an attempt is counted before its password is checked
// (one atomic statement), so racing attempts cannot slip past a limit together. A correct
// password is refused only when the client presenting it is over its own limits; it then
// clears that client's failures for the email (a run of typos ends), but still counts
// against the client's budget.
type throttle struct {
	store       sessions.Store
	now         func() time.Time
	client      loginLimit
	clientEmail loginLimit
}

func newThrottle(st sessions.Store) *throttle {
	return &throttle{store: st, now: throttleNow, client: perClient, clientEmail: perClientEmail}
}

// throttleNow is the throttles' clock: tests that make a window's worth of logins
// through a whole site hold it still, so that a slow machine (each login hashes a
// password) cannot stretch their attempts over two windows.
var throttleNow = time.Now

// refusal says why an attempt waits: over the client's budget, or over its failures
// for this email.
type refusal struct {
	wait    time.Duration
	overall bool // the client's budget, rather than its failures for the email
}

// attempt counts one login attempt of email from client and tells how long to wait when
// it is over a limit (wait 0: it may go ahead).
func (t *throttle) attempt(ctx context.Context, email string, client loginClient) (refusal, error) {
	now := t.now().UTC()
	var r refusal
	opened := false
	for _, s := range []struct {
		scope   string
		limit   loginLimit
		overall bool
	}{{client.scope, t.client, true}, {pairScope(email, client), t.clientEmail, false}} {
		w, err := sessions.CountAttempt(ctx, t.store, s.scope, now, s.limit.window)
		if err != nil {
			return refusal{}, err
		}
		if w.Attempts > s.limit.max {
			if wait := w.Start.Add(s.limit.window).Sub(now); wait > r.wait {
				r = refusal{wait: wait, overall: s.overall}
			}
		}
		opened = opened || w.Attempts == 1
	}
	if opened {
		// A new window began: a cheap moment to forget windows long over.
		if err := sessions.PruneAttempts(ctx, t.store, now.Add(-max(t.client.window, t.clientEmail.window))); err != nil {
			return refusal{}, err
		}
	}
	if r.wait > 0 && r.wait < time.Second {
		r.wait = time.Second
	}
	return r, nil
}

// succeeded forgets client's failures for email; the attempt stays in client's budget.
func (t *throttle) succeeded(ctx context.Context, email string, client loginClient) error {
	return sessions.ClearAttempts(ctx, t.store, pairScope(email, client))
}

// pairScope keys one client's attempts at one email. It is hashed: the table then holds
// no email, nor what people type by mistake into the email field (their password, often).
func pairScope(email string, client loginClient) string {
	sum := sha256.Sum256([]byte(email + "\x00" + client.scope))
	return "pair:" + hex.EncodeToString(sum[:16])
}

// clientScope keys a client by its address (an IPv6 client by its /64).
func clientScope(ip netip.Addr) string { return "ip:" + clientaddr.Scope(ip) }

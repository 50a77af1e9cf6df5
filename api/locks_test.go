package api_test

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revops/revops/internal/store"
)

// lockedDeal is a deal of the harness and a way to lock its row from outside the API.
type lockedDeal struct {
	h  *harness
	id string
}

func newLockedDeal(h *harness) lockedDeal {
	acct := h.newObjAccount("Globex")
	return lockedDeal{h: h, id: h.mustObj(http.StatusCreated, "POST", "/v1/deals", pricedDealBody(acct))["id"].(string)}
}

// hold takes the deal's row lock (PostgreSQL) or the database's write lock (SQLite) in a
// transaction of another connection, kept until release.
func (d lockedDeal) hold(db string) (release func()) {
	t := d.h.t
	t.Helper()
	ctx := context.Background()
	var end func()
	if db == "postgres" {
		conn, err := pgx.Connect(ctx, d.h.dbURL)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT 1 FROM deals WHERE id = $1 FOR UPDATE", d.id); err != nil {
			t.Fatal(err)
		}
		end = func() { _ = tx.Rollback(ctx); _ = conn.Close(ctx) }
	} else {
		raw, err := sql.Open("sqlite3", "file:"+d.h.dbURL+"?_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		tx, err := raw.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the one writer's lock
		if err != nil {
			t.Fatal(err)
		}
		end = func() { _ = tx.Rollback(); _ = raw.Close() }
	}
	var once sync.Once
	release = func() { once.Do(end) }
	t.Cleanup(release)
	return release
}

func (d lockedDeal) patch() response {
	return d.h.do("PATCH", "/v1/deals/"+d.id, d.h.key[skSandbox], map[string]any{"opportunity_id": "changed"})
}

// opportunity is the deal's opportunity_id as the API reads it (reads take no lock).
func (d lockedDeal) opportunity() any {
	return d.h.mustObj(http.StatusOK, "GET", "/v1/deals/"+d.id, nil)["opportunity_id"]
}

// CONTRACT §21: a request that waits on a lock past the lock timeout (on SQLite the busy
// timeout) answers 429 lock_timeout with Retry-After: 1 and changes nothing; once the lock
// is released, the same request succeeds.
func TestLockTimeoutAnswers429(t *testing.T) {
	o := store.DefaultOptions()
	o.LockTimeout = 200 * time.Millisecond
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			d := newLockedDeal(newHarnessWithin(t, db, o))
			before := d.opportunity()
			release := d.hold(db)
			r := d.patch()
			if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "1" {
				t.Fatalf("PATCH on a locked deal: %d, Retry-After %q: %s", r.Status, r.Header.Get("Retry-After"), r.Body)
			}
			if e := r.json(t)["error"].(map[string]any); e["type"] != "rate_limit_error" || e["code"] != "lock_timeout" {
				t.Fatalf("error %v, want rate_limit_error lock_timeout", e)
			}
			release()
			if got := d.opportunity(); got != before {
				t.Fatalf("opportunity_id %v after the 429, want %v unchanged", got, before)
			}
			if r := d.patch(); r.Status != http.StatusOK {
				t.Fatalf("PATCH once the lock is released: %d %s", r.Status, r.Body)
			}
			if got := d.opportunity(); got != "changed" {
				t.Fatalf("opportunity_id %v after the PATCH, want changed", got)
			}
		})
	}
}

// A request stopped by the statement timeout (here while it waits on a lock, the lock
// timeout being longer) answers 503 api_error with Retry-After and no internals.
func TestStatementTimeoutAnswers503(t *testing.T) {
	o := store.DefaultOptions()
	o.LockTimeout, o.StatementTimeout = 10*time.Minute, 200*time.Millisecond
	d := newLockedDeal(newHarnessWithin(t, "postgres", o))
	before := d.opportunity()
	release := d.hold("postgres")
	r := d.patch()
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("PATCH past the statement timeout: %d, Retry-After %q: %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	e := r.json(t)["error"].(map[string]any)
	if e["type"] != "api_error" || e["code"] != "service_unavailable" {
		t.Fatalf("error %v, want api_error service_unavailable", e)
	}
	for _, internal := range []string{"statement", "SQLSTATE", "57014", "canceling"} {
		if strings.Contains(string(r.Body), internal) {
			t.Fatalf("the answer tells internals (%q): %s", internal, r.Body)
		}
	}
	release()
	if got := d.opportunity(); got != before {
		t.Fatalf("opportunity_id %v after the 503, want %v unchanged", got, before)
	}
}

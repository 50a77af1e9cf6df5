package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// poolsStore opens a fresh PostgreSQL store within o, with one environment and one account.
func poolsStore(t *testing.T, o store.Options) (st *store.Store, env store.Env, acctID, url string) {
	t.Helper()
	ctx := context.Background()
	url = testdb.URL(t)
	st = testdb.OpenWith(t, url, o)
	org, err := orgs.CreateWithHash(ctx, st, "Acme", "a@example.com", "x")
	if err != nil {
		t.Fatal(err)
	}
	if env, err = st.Environment(ctx, org.ID, "live"); err != nil {
		t.Fatal(err)
	}
	return st, env, newAccount(t, st, env), url
}

func newAccount(t *testing.T, st *store.Store, env store.Env) string {
	t.Helper()
	a, _, err := insertAccount(context.Background(), st, env, models.Account{ID: uuid.NewString(), Name: "Globex", Status: "draft", Properties: "{}"},
		func(models.Account) []store.Emit { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// holdLock runs sql (a SELECT … FOR UPDATE, a LOCK TABLE) in a transaction of a connection
// of its own — another process, as far as the store can tell — and keeps its locks until
// release (or the test's end).
func holdLock(t *testing.T, url, sql string, args ...any) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = tx.Rollback(ctx)
			_ = conn.Close(ctx)
		})
	}
	t.Cleanup(release)
	return release
}

// waitUntil polls cond until it holds; the minute is a guard against a hang, not a bound
// the test asserts.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// lockWaiters counts the sessions of the database waiting on a lock.
func lockWaiters(t *testing.T, url string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func lockAccount(ctx context.Context, st *store.Store, env store.Env, id string) error {
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		_, err := tx.LockAccount(id)
		return err
	})
	return err
}

func isLockTimeout(err error) bool {
	var busy *apperr.BusyError
	var pgErr *pgconn.PgError
	return errors.As(err, &busy) && busy.Code == apperr.CodeLockTimeout && errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// CONTRACT §21: tenant jobs draw from a pool of their own. While every job connection is
// taken by a job waiting on a lock, requests still run, on connections no job took.
func TestJobsNeverTakeRequestConnections(t *testing.T) {
	o := store.DefaultOptions()
	o.Connections, o.JobConnections = 2, 2
	o.LockTimeout = 200 * time.Millisecond
	o.JobLockTimeout = 10 * time.Minute // the jobs below wait until the lock is released
	st, env, acct, url := poolsStore(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	release := holdLock(t, url, "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", acct)

	done := make(chan error, o.JobConnections)
	for range o.JobConnections {
		go func() { done <- lockAccount(ctx, st.OnJobsPool(), env, acct) }()
	}
	waitUntil(t, "the jobs to take every job connection", func() bool {
		_, jobs := st.PoolStats()
		return jobs.InUse == o.JobConnections
	})
	waitUntil(t, "the jobs to wait on the lock", func() bool { return lockWaiters(t, url) == o.JobConnections })

	for i := range 2 * o.Connections {
		reqs, jobs := st.PoolStats()
		if reqs.InUse != 0 || jobs.InUse != o.JobConnections {
			t.Fatalf("request %d: %d request connections and %d job connections in use, want 0 and %d", i, reqs.InUse, jobs.InUse, o.JobConnections)
		}
		newAccount(t, st, env)
		if _, err := st.Account(ctx, env, acct); err != nil { // reading the locked row takes no lock
			t.Fatal(err)
		}
	}
	// A request that needs the lock gives up at the requests' lock timeout, while the jobs
	// keep waiting at theirs.
	if err := lockAccount(ctx, st, env, acct); !isLockTimeout(err) {
		t.Fatalf("request on the locked row: %v, want lock_timeout", err)
	}
	if n := lockWaiters(t, url); n != o.JobConnections {
		t.Fatalf("%d sessions wait on the lock after the request gave up, want the %d jobs", n, o.JobConnections)
	}

	release()
	for range o.JobConnections {
		if err := <-done; err != nil {
			t.Fatalf("job after the lock was released: %v", err)
		}
	}
	if err := lockAccount(ctx, st, env, acct); err != nil {
		t.Fatalf("request after the lock was released: %v", err)
	}
}

// A job waiting on a lock gives up at the jobs' own lock timeout, not the requests'.
func TestJobGivesUpAtItsLockTimeout(t *testing.T) {
	o := store.DefaultOptions()
	o.LockTimeout = 10 * time.Minute
	o.JobLockTimeout = 200 * time.Millisecond
	st, env, acct, url := poolsStore(t, o)
	holdLock(t, url, "SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE", acct)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang
	defer cancel()
	if err := lockAccount(ctx, st.OnJobsPool(), env, acct); !isLockTimeout(err) {
		t.Fatalf("job on the locked row: %v, want lock_timeout", err)
	}
}

// Each pool's connections carry its timeouts from their first statement.
func TestPoolTimeoutSettings(t *testing.T) {
	o := store.DefaultOptions()
	o.LockTimeout, o.StatementTimeout = 1500*time.Millisecond, 20*time.Second
	st, _, _, _ := poolsStore(t, o)
	ctx := context.Background()
	for _, c := range []struct {
		st            *store.Store
		name, setting string
		want          string
	}{
		{st, "requests", "lock_timeout", "1500ms"},
		{st, "requests", "statement_timeout", "20s"},
		{st.OnJobsPool(), "jobs", "lock_timeout", "5s"},
		{st.OnJobsPool(), "jobs", "statement_timeout", "2min"},
	} {
		if got, err := c.st.ShowForTest(ctx, c.setting); err != nil || got != c.want {
			t.Errorf("%s %s = %q, %v; want %q", c.name, c.setting, got, err, c.want)
		}
	}
	if st.OnJobsPool() == st {
		t.Error("Jobs is the request store on PostgreSQL")
	}
}

// SQLite keeps one connection that jobs share (one writer).
func TestSQLiteJobsShareTheConnection(t *testing.T) {
	st := testdb.Open(t, filepath.Join(t.TempDir(), "revops.db"))
	if st.OnJobsPool() != st {
		t.Fatal("Jobs is another store on SQLite")
	}
}

// A statement the statement timeout stopped is apperr.ErrStatementTimeout (503); a
// context that ended is not.
func TestStatementTimeout(t *testing.T) {
	o := store.DefaultOptions()
	o.StatementTimeout = 100 * time.Millisecond
	st, _, _, _ := poolsStore(t, o)
	ctx := context.Background()
	if err := st.SleepForTest(ctx, 60); !errors.Is(err, apperr.ErrStatementTimeout) {
		t.Fatalf("pg_sleep past the statement timeout: %v, want ErrStatementTimeout", err)
	}
	if err := st.OnJobsPool().SleepForTest(ctx, 0.01); err != nil {
		t.Fatalf("a short statement on the job pool: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := st.OnJobsPool().SleepForTest(cctx, 60); err == nil || errors.Is(err, apperr.ErrStatementTimeout) {
		t.Fatalf("pg_sleep past the context's deadline: %v, want the context's error", err)
	}
}

// Retention and migrations are exempt from the requests' timeouts (CONTRACT §21): with a
// lock timeout of 1 ms, each waits on a lock held elsewhere until it is released.
func TestRetentionAndMigrateAreExempt(t *testing.T) {
	o := store.DefaultOptions()
	o.Connections = 1 // the check that migrate gives its connection its settings back reads that one
	o.LockTimeout = time.Millisecond
	st, env, _, url := poolsStore(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	_, events, err := insertAccount(ctx, st, env, models.Account{ID: uuid.NewString(), Name: "Initech", Status: "draft", Properties: "{}"},
		func(a models.Account) []store.Emit {
			return []store.Emit{{Type: "account-created", ObjectType: "account", ObjectID: a.ID, Object: a}}
		})
	if err != nil || len(events) != 1 {
		t.Fatalf("insert account: %d events, %v", len(events), err)
	}

	release := holdLock(t, url, "SELECT 1 FROM events WHERE id = $1 FOR UPDATE", events[0].ID)
	purged := make(chan error, 1)
	go func() {
		p, err := st.PurgeEvents(ctx, time.Now().Add(time.Hour), 10)
		if err == nil && p.Deleted["events"] != 1 {
			err = errors.New("the event was not purged")
		}
		purged <- err
	}()
	waitUntil(t, "retention to wait on the lock", func() bool { return lockWaiters(t, url) == 1 })
	release()
	if err := <-purged; err != nil {
		t.Fatalf("retention: %v", err)
	}

	release = holdLock(t, url, "LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE")
	migrated := make(chan error, 1)
	go func() { _, err := st.Migrate(ctx); migrated <- err }()
	waitUntil(t, "migrate to wait on the lock", func() bool { return lockWaiters(t, url) == 1 })
	release()
	if err := <-migrated; err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if err := lockAccount(ctx, st, env, newAccount(t, st, env)); err != nil { // the pool's settings are back
		t.Fatal(err)
	}
	if got, err := st.ShowForTest(ctx, "lock_timeout"); err != nil || got != "1ms" {
		t.Fatalf("lock_timeout after migrate = %q, %v; want the pool's 1ms back", got, err)
	}
}

package store_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/store"
)

func TestLoginAttemptWindows(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000).UTC()
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		st := db.st
		steps := []struct {
			what     string
			at       time.Duration // since t0
			scope    string
			op       string // count, uncount, clear
			attempts int    // after a count
			start    time.Duration
		}{
			{"first attempt opens a window", 0, "email:a", "count", 1, 0},
			{"second counts on", 10 * time.Second, "email:a", "count", 2, 0},
			{"another scope is separate", 11 * time.Second, "ip:192.0.2.1", "count", 1, 11 * time.Second},
			{"third", 20 * time.Second, "email:a", "count", 3, 0},
			{"a success takes one back", 21 * time.Second, "email:a", "uncount", 0, 0},
			{"so the next is the third again", 22 * time.Second, "email:a", "count", 3, 0},
			{"the window's last moment still counts", time.Minute - time.Millisecond, "email:a", "count", 4, 0},
			{"after the window a new one opens", time.Minute, "email:a", "count", 1, time.Minute},
			{"clear forgets", time.Minute + time.Second, "email:a", "clear", 0, 0},
			{"and the next opens afresh", time.Minute + 2*time.Second, "email:a", "count", 1, time.Minute + 2*time.Second},
		}
		for _, s := range steps {
			var err error
			switch s.op {
			case "count":
				var w store.LoginWindow
				w, err = countAttempt(st, s.scope, t0.Add(s.at), time.Minute)
				if err == nil && (w.Attempts != s.attempts || !w.Start.Equal(t0.Add(s.start))) {
					t.Fatalf("%s: got %d attempts since %v, want %d since %v", s.what, w.Attempts, w.Start, s.attempts, t0.Add(s.start))
				}
			case "uncount":
				err = uncountAttempt(st, s.scope)
			case "clear":
				err = clearAttempts(st, s.scope)
			}
			if err != nil {
				t.Fatalf("%s: %v", s.what, err)
			}
		}
		// Pruning drops windows begun before the cut, keeps the rest.
		if err := pruneAttempts(st, t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if w, _ := countAttempt(st, "ip:192.0.2.1", t0.Add(time.Minute+3*time.Second), time.Hour); w.Attempts != 1 {
			t.Errorf("pruned scope kept %d attempts", w.Attempts)
		}
		if w, _ := countAttempt(st, "email:a", t0.Add(time.Minute+3*time.Second), time.Hour); w.Attempts != 2 {
			t.Errorf("recent scope has %d attempts after prune, want 2", w.Attempts)
		}
	})
}

// Thirty racing attempts each get their own count: with a limit of five, exactly five
// pass whatever the interleaving (replicas share nothing but the database).
func TestLoginAttemptsCountAtomically(t *testing.T) {
	now := time.Now().UTC()
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		const n = 30
		counts := make([]int, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w, err := countAttempt(db.st, "email:race@example.com", now, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				counts[i] = w.Attempts
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		sort.Ints(counts)
		for i, c := range counts {
			if c != i+1 {
				t.Fatalf("counts %v: want 1..%d, each once", counts, n)
			}
		}
	})
}

// The throttle's verbs, each in a transaction of no tenant's, as the sessions package
// writes them.

func countAttempt(st *store.Store, scope string, now time.Time, window time.Duration) (w store.LoginWindow, err error) {
	_, err = st.InTx(context.Background(), store.Unauthenticated, func(tx *store.Tx) error {
		w, err = tx.CountLoginAttempt(scope, now, window)
		return err
	})
	return w, err
}

func uncountAttempt(st *store.Store, scope string) error {
	_, err := st.InTx(context.Background(), store.Unauthenticated, func(tx *store.Tx) error { return tx.UncountLoginAttempt(scope) })
	return err
}

func clearAttempts(st *store.Store, scope string) error {
	_, err := st.InTx(context.Background(), store.Unauthenticated, func(tx *store.Tx) error { return tx.ClearLoginAttempts(scope) })
	return err
}

func pruneAttempts(st *store.Store, before time.Time) error {
	_, err := st.InTx(context.Background(), store.Unauthenticated, func(tx *store.Tx) error { return tx.PruneLoginAttempts(before) })
	return err
}

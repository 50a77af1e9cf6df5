package store_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

func TestLoginAttemptWindows(t *testing.T) {
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000).UTC()
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
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
					w, err = st.CountLoginAttempt(ctx, s.scope, t0.Add(s.at), time.Minute)
					if err == nil && (w.Attempts != s.attempts || !w.Start.Equal(t0.Add(s.start))) {
						t.Fatalf("%s: got %d attempts since %v, want %d since %v", s.what, w.Attempts, w.Start, s.attempts, t0.Add(s.start))
					}
				case "uncount":
					err = st.UncountLoginAttempt(ctx, s.scope)
				case "clear":
					err = st.ClearLoginAttempts(ctx, s.scope)
				}
				if err != nil {
					t.Fatalf("%s: %v", s.what, err)
				}
			}
			// Pruning drops windows begun before the cut, keeps the rest.
			if err := st.PruneLoginAttempts(ctx, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if w, _ := st.CountLoginAttempt(ctx, "ip:192.0.2.1", t0.Add(time.Minute+3*time.Second), time.Hour); w.Attempts != 1 {
				t.Errorf("pruned scope kept %d attempts", w.Attempts)
			}
			if w, _ := st.CountLoginAttempt(ctx, "email:a", t0.Add(time.Minute+3*time.Second), time.Hour); w.Attempts != 2 {
				t.Errorf("recent scope has %d attempts after prune, want 2", w.Attempts)
			}
		})
	}
}

// Thirty racing attempts each get their own count: with a limit of five, exactly five
// pass whatever the interleaving (replicas share nothing but the database).
func TestLoginAttemptsCountAtomically(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
			const n = 30
			counts := make([]int, n)
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w, err := db.st.CountLoginAttempt(ctx, "email:race@example.com", now, time.Minute)
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
}

// A password reset ends every session of that user, and only of that user.
func TestResetUserPasswordEndsSessions(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
			st := db.st
			victim, err := st.UserByEmail(ctx, "a@example.com")
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.CreateOrganization(ctx, "Other", "b@example.com", "x")
			if err != nil {
				t.Fatal(err)
			}
			bystander, err := st.UserByEmail(ctx, "b@example.com")
			if err != nil {
				t.Fatal(err)
			}
			sessions := map[string]models.OrganizationUser{"s1": victim, "s2": victim, "s3": bystander}
			for id, u := range sessions {
				err := st.CreateSession(ctx, &models.DashboardSession{ID: id, UserID: u.ID, OrganizationID: u.OrganizationID,
					Environment: models.EnvSandbox, CSRFToken: "t", CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := st.ResetUserPassword(ctx, victim.ID, "new-hash"); err != nil {
				t.Fatal(err)
			}
			for id, u := range sessions {
				_, err := st.Session(ctx, id, now)
				if ended := errors.Is(err, apperr.ErrNotFound); ended != (u.ID == victim.ID) {
					t.Errorf("session %s of %s: err %v", id, u.Email, err)
				}
			}
			if u, _ := st.UserByEmail(ctx, "a@example.com"); u.PasswordHash != "new-hash" {
				t.Errorf("hash not replaced: %q", u.PasswordHash)
			}
			if err := st.ResetUserPassword(ctx, "no-such-user", "h"); !errors.Is(err, apperr.ErrNotFound) {
				t.Errorf("unknown user: %v", err)
			}
		})
	}
}

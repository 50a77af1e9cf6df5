package sessions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/sessions"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// A device is known for its own user's email only, until it expires; signing in again
// renews it; a user is remembered on at most MaxLoginDevices browsers, and on none after
// a password reset (CONTRACT §17).
func TestLoginDevices(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	testdb.ForBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		st := db.Store
		owner, err := st.UserByEmail(ctx, "a@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := orgs.CreateWithHash(ctx, st, "Other", "b@example.com", "x"); err != nil {
			t.Fatal(err)
		}
		known := func(id, email string, at time.Time) bool {
			t.Helper()
			ok, err := st.KnownDevice(ctx, id, email, at)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		remember := func(id string, at time.Time) {
			t.Helper()
			err := sessions.RememberDevice(ctx, st, owner.OrganizationID, models.LoginDevice{ID: id, UserID: owner.ID, CreatedAt: at, ExpiresAt: at.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
		}
		remember("d0", now)
		switch {
		case !known("d0", "a@example.com", now):
			t.Fatal("a remembered device is not known")
		case known("d0", "b@example.com", now):
			t.Fatal("a device is known for another user's email")
		case known("nope", "a@example.com", now):
			t.Fatal("an unknown id is known")
		case known("d0", "a@example.com", now.Add(time.Hour)):
			t.Fatal("an expired device is known")
		}
		remember("d0", now.Add(50*time.Minute)) // signed in again: renewed
		if !known("d0", "a@example.com", now.Add(time.Hour)) {
			t.Fatal("a renewed device expired at its first expiry")
		}
		for i := 1; i <= sessions.MaxLoginDevices; i++ {
			remember(fmt.Sprintf("d%d", i), now.Add(time.Duration(i)*time.Second))
		}
		at := now.Add(sessions.MaxLoginDevices * time.Second)
		if known("d0", "a@example.com", at) {
			t.Error("the first remembered device outlived the cap")
		}
		for i := 1; i <= sessions.MaxLoginDevices; i++ {
			if !known(fmt.Sprintf("d%d", i), "a@example.com", at) {
				t.Errorf("device d%d forgotten, want the %d newest kept", i, sessions.MaxLoginDevices)
			}
		}
		// A password reset forgets them all.
		if err := orgs.SetPassword(ctx, st, owner.ID, "new-hash"); err != nil {
			t.Fatal(err)
		}
		if known("d1", "a@example.com", at) {
			t.Error("a device outlived its user's password reset")
		}
	})
}

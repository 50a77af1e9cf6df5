package orgs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/sessions"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// A password reset ends every session of that user, and only of that user.
func TestResetUserPasswordEndsSessions(t *testing.T) {
	now := time.Now().UTC()
	testdb.ForBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		st := db.Store
		victim, err := st.UserByEmail(ctx, "a@example.com")
		if err != nil {
			t.Fatal(err)
		}
		_, err = orgs.CreateWithHash(ctx, st, "Other", "b@example.com", "x")
		if err != nil {
			t.Fatal(err)
		}
		bystander, err := st.UserByEmail(ctx, "b@example.com")
		if err != nil {
			t.Fatal(err)
		}
		held := map[string]models.OrganizationUser{"s1": victim, "s2": victim, "s3": bystander}
		for id, u := range held {
			err := sessions.Create(ctx, st, &models.DashboardSession{ID: id, UserID: u.ID, OrganizationID: u.OrganizationID,
				Environment: models.EnvSandbox, CSRFToken: "t", CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := orgs.SetPassword(ctx, st, victim.ID, "new-hash"); err != nil {
			t.Fatal(err)
		}
		for id, u := range held {
			_, err := st.Session(ctx, id, now)
			if ended := errors.Is(err, apperr.ErrNotFound); ended != (u.ID == victim.ID) {
				t.Errorf("session %s of %s: err %v", id, u.Email, err)
			}
		}
		if u, _ := st.UserByEmail(ctx, "a@example.com"); u.PasswordHash != "new-hash" {
			t.Errorf("hash not replaced: %q", u.PasswordHash)
		}
		if err := orgs.SetPassword(ctx, st, "no-such-user", "h"); !errors.Is(err, apperr.ErrNotFound) {
			t.Errorf("unknown user: %v", err)
		}
	})
}

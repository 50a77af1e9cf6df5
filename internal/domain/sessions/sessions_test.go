package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/sessions"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// CONTRACT §17: at most 20 dashboard sessions per user; a new login ends the oldest.
func TestSessionsPerUserBounded(t *testing.T) {
	testdb.ForBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		ctx, st := context.Background(), db.Store
		u, err := st.UserByEmail(ctx, "a@example.com")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now().UTC().Truncate(time.Millisecond)
		session := func(i int) *models.DashboardSession {
			at := start.Add(time.Duration(i) * time.Second)
			return &models.DashboardSession{ID: fmt.Sprintf("s%02d", i), UserID: u.ID, OrganizationID: u.OrganizationID,
				Environment: models.EnvSandbox, CSRFToken: "t", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
		}
		for i := range sessions.MaxSessions + 2 {
			if err := sessions.Create(ctx, st, session(i)); err != nil {
				t.Fatal(err)
			}
		}
		now := start.Add(time.Minute)
		for i := range sessions.MaxSessions + 2 {
			_, err := st.Session(ctx, fmt.Sprintf("s%02d", i), now)
			if ended := i < 2; ended != errors.Is(err, apperr.ErrNotFound) || (!ended && err != nil) {
				t.Errorf("session %d: %v (want ended: %v)", i, err, ended)
			}
		}
	})
}

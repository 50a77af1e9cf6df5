package keys

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

func newKey(env models.Env, now time.Time) *models.APIKey {
	id := uuid.NewString()
	return &models.APIKey{ID: id, OrganizationID: env.OrganizationID, EnvironmentID: env.ID, Environment: env.Name,
		Type: models.KeySecret, Prefix: "sk_live_", Last4: "abcd", Hash: id, CreatedAt: now}
}

// CONTRACT §17: at most 100 active or expiring keys per environment, decided under the
// environment's lock so that concurrent creates cannot exceed it; revoked and expired
// keys do not count; rolling a key at the limit is allowed.
func TestAPIKeyLimit(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		ctx, st, env := context.Background(), db.Store, db.Env
		now := time.Now().UTC().Truncate(time.Millisecond)
		var made []*models.APIKey
		for range MaxKeys - 1 {
			k := newKey(env, now)
			if err := insert(ctx, st, k); err != nil {
				t.Fatal(err)
			}
			made = append(made, k)
		}
		// Ten racing creates for the last place: exactly one gets it.
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- insert(ctx, st, newKey(env, now))
			}()
		}
		wg.Wait()
		close(errs)
		created := 0
		for err := range errs {
			var ie *apperr.InvalidError
			switch {
			case err == nil:
				created++
			case errors.As(err, &ie) && errors.Is(err, ErrTooManyKeys) && ie.Code == "too_many_keys":
			default:
				t.Fatalf("racing create: %v", err)
			}
		}
		if created != 1 {
			t.Fatalf("%d racing creates succeeded at %d keys, want 1", created, MaxKeys-1)
		}
		// At the limit a roll is allowed: it replaces a key.
		if _, err := replace(ctx, st, env.OrganizationID, made[0].ID, now.Add(time.Hour), newKey(env, now)); err != nil {
			t.Fatalf("roll at the limit: %v", err)
		}
		if err := insert(ctx, st, newKey(env, now)); !errors.Is(err, ErrTooManyKeys) {
			t.Fatalf("create with the rolled key still expiring: %v", err)
		}
		// Revoked and expired keys do not count: with the rolled key's replacement the
		// environment has 101; two revoked leave 99, and a roll whose old key expires
		// at once keeps 99, so exactly one more create passes.
		for _, k := range made[1:3] {
			if _, err := revoke(ctx, st, env.OrganizationID, k.ID, now); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := replace(ctx, st, env.OrganizationID, made[3].ID, now, newKey(env, now)); err != nil {
			t.Fatal(err)
		}
		if err := insert(ctx, st, newKey(env, now)); err != nil {
			t.Fatalf("create after two revokes and an expiry: %v", err)
		}
		if err := insert(ctx, st, newKey(env, now)); !errors.Is(err, ErrTooManyKeys) {
			t.Fatalf("create past the limit again: %v", err)
		}
		// The other environment has its own count.
		other, err := st.Environment(ctx, env.OrganizationID, "sandbox")
		if err != nil {
			t.Fatal(err)
		}
		if err := insert(ctx, st, newKey(other, now)); err != nil {
			t.Fatalf("the other environment: %v", err)
		}
	})
}

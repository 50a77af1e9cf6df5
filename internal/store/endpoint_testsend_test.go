package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// One manual test at a time per endpoint, across replicas (CONTRACT §17): a second
// store on the same database (another replica) is refused while the first holds the
// claim, another endpoint is not; a released claim, or one past its lease (its process
// died), can be taken again, and a lapsed holder's late release frees nothing.
func TestEndpointTestClaim(t *testing.T) {
	forBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db seeded) {
		other := testdb.Open(t, db.url) // a second replica
		a := newEndpoint(t, db, "https://a.example/hooks", nil, true)
		b := newEndpoint(t, db, "https://b.example/hooks", nil, true)
		now := time.Now().UTC()
		const lease = 45 * time.Second

		ep, tok, err := db.st.ClaimEndpointTest(ctx, db.env, a.ID, now, lease)
		if err != nil || ep.ID != a.ID || ep.Secret == "" || tok == "" {
			t.Fatalf("first claim = %s %q, %v", ep.ID, tok, err)
		}
		if _, _, err := other.ClaimEndpointTest(ctx, db.env, a.ID, now, lease); !errors.Is(err, store.ErrTestInProgress) || conflictCode(err) != store.CodeTestInProgress {
			t.Fatalf("second claim on another replica: %v, want %s", err, store.CodeTestInProgress)
		}
		if _, _, err := other.ClaimEndpointTest(ctx, db.env, b.ID, now, lease); err != nil {
			t.Fatalf("another endpoint: %v", err)
		}
		if err := db.st.ReleaseEndpointTest(ctx, db.env, a.ID, tok); err != nil {
			t.Fatal(err)
		}
		_, tok2, err := other.ClaimEndpointTest(ctx, db.env, a.ID, now, lease)
		if err != nil {
			t.Fatalf("claim after release: %v", err)
		}

		// The holder died: past its lease the claim is taken over, and its release,
		// arriving late, leaves the new claim alone.
		later := now.Add(lease + time.Second)
		_, tok3, err := db.st.ClaimEndpointTest(ctx, db.env, a.ID, later, lease)
		if err != nil {
			t.Fatalf("claim after the lease: %v", err)
		}
		if err := other.ReleaseEndpointTest(ctx, db.env, a.ID, tok2); err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.ClaimEndpointTest(ctx, db.env, a.ID, later, lease); !errors.Is(err, store.ErrTestInProgress) {
			t.Fatalf("a lapsed holder's release freed the new claim: %v", err)
		}
		if err := db.st.ReleaseEndpointTest(ctx, db.env, a.ID, tok3); err != nil {
			t.Fatal(err)
		}

		// Another environment's endpoint is no endpoint here; the claim never moves
		// updated_at.
		live, err := db.st.Environment(ctx, db.env.OrganizationID, models.EnvLive)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.st.ClaimEndpointTest(ctx, live, a.ID, now, lease); !errors.Is(err, apperr.ErrNotFound) {
			t.Fatalf("claim from another environment: %v, want not found", err)
		}
		if got, err := db.st.WebhookEndpointByID(ctx, db.env, a.ID); err != nil || got.UpdatedAt.Sub(a.UpdatedAt).Abs() > time.Millisecond {
			t.Fatalf("updated_at %v after claims, want %v (%v)", got.UpdatedAt, a.UpdatedAt, err)
		}
	})
}

package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
)

// An idempotency record keeps its body's fingerprint keyed (the body may carry custom
// header values, CONTRACT §25): the plain SHA-256 is nowhere in the database, the same
// body is still recognised — also by a process whose new key is listed first — and another
// body is still told apart.
func TestIdempotencyFingerprintIsKeyed(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		const fp = "9d5ed678fe57bcca610140957afab571c2b1c4bd4f7d4d5e0e7c5d3e1a6b2f00"
		if c := claimKey(t, db, "k-digest", fp); c.Outcome != store.ClaimOwned {
			t.Fatalf("first claim: %v", c.Outcome)
		}
		dump, err := db.st.DumpForTest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(dump, fp) || !strings.Contains(dump, secretbox.DigestPrefix+testdb.Keyring().Current()+":") {
			t.Fatal("the record keeps the plain fingerprint, or no keyed one")
		}
		rotated := openKeyed(t, db.url, secretbox.Generate(), testdb.Keys())
		for _, c := range []struct {
			st   *store.Store
			fp   string
			want store.ClaimOutcome
		}{
			{db.st, fp, store.ClaimInUse},
			{db.st, strings.Replace(fp, "9d", "9e", 1), store.ClaimReused},
			{rotated, fp, store.ClaimInUse},
			{rotated, strings.Replace(fp, "9d", "9e", 1), store.ClaimReused},
		} {
			got, err := c.st.ClaimIdempotencyKey(ctx, db.env, store.IdempotentRequest{Key: "k-digest", Method: "POST", Path: "/v1/accounts", Fingerprint: c.fp})
			if err != nil || got.Outcome != c.want {
				t.Errorf("claim of %.4s…: %v, %v; want %v", c.fp, got.Outcome, err, c.want)
			}
		}
	})
}

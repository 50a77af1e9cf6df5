package keys

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/apikey"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// A negative expiry is refused before the store is read: the caller is told which
// parameter to change, and no status is chosen here (the edge answers 400).
func TestRollRefusesNegativeExpiry(t *testing.T) {
	_, err := NewManager(nil).Roll(context.Background(), "org", "key", -time.Second)
	var ie *apperr.InvalidError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNegativeExpiry) ||
		ie.Code != apperr.CodeParameterInvalid || ie.Param != "expires_in" || ie.Message != "expires_in must not be negative" {
		t.Fatalf("got %#v", err)
	}
}

// fakeStore holds keys by hash and counts lookups.
type fakeStore struct {
	Store
	keys    map[string]models.APIKey
	lookups int
}

func (f *fakeStore) APIKeyByHash(_ context.Context, hash string) (models.APIKey, error) {
	f.lookups++
	k, ok := f.keys[hash]
	if !ok {
		return k, apperr.ErrNotFound
	}
	return k, nil
}

func (f *fakeStore) TouchAPIKey(context.Context, string, time.Time) error { return nil }

// AuthenticateKnown (CONTRACT §17) considers only keys seen valid within RecentTTL: it
// never looks up another key, and reads a known one again after CacheTTL so that a
// revocation elsewhere still takes effect (§2).
func TestAuthenticateKnown(t *testing.T) {
	ctx := context.Background()
	gen, err := apikey.Generate(models.KeySecret, "live")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := apikey.Generate(models.KeySecret, "live")
	fs := &fakeStore{keys: map[string]models.APIKey{
		gen.Hash:   {ID: "k1", Type: models.KeySecret, Hash: gen.Hash},
		other.Hash: {ID: "k2", Type: models.KeySecret, Hash: other.Hash},
	}}
	now := time.Unix(1_700_000_000, 0)
	m := NewManager(fs)
	m.now = func() time.Time { return now }
	expect := func(step, key string, want error, lookups int) {
		t.Helper()
		fs.lookups = 0
		_, err := m.AuthenticateKnown(ctx, key)
		if !errors.Is(err, want) || (want == nil && err != nil) || fs.lookups != lookups {
			t.Errorf("%s: err %v, %d lookups; want %v, %d", step, err, fs.lookups, want, lookups)
		}
	}
	expect("never seen", gen.Plain, ErrNotRecent, 0)
	expect("malformed", "sk_live_nope", ErrNotRecent, 0)
	if _, err := m.Authenticate(ctx, gen.Plain); err != nil {
		t.Fatal(err)
	}
	expect("just valid", gen.Plain, nil, 0)
	expect("a valid key not seen", other.Plain, ErrNotRecent, 0)
	now = now.Add(CacheTTL)
	expect("stale: read again", gen.Plain, nil, 1)
	revoked := now
	k := fs.keys[gen.Hash]
	k.RevokedAt = &revoked
	fs.keys[gen.Hash] = k
	now = now.Add(CacheTTL)
	expect("revoked elsewhere", gen.Plain, ErrInvalid, 1)
	k.RevokedAt = nil
	fs.keys[gen.Hash] = k
	now = now.Add(RecentTTL)
	expect("no longer recent", gen.Plain, ErrNotRecent, 0)
}

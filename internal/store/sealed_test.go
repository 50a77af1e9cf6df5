package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// openKeyed opens a second store on db's database with the keys listed (nil: none).
func openKeyed(t *testing.T, url string, keys ...string) *store.Store {
	t.Helper()
	o := store.DefaultOptions()
	kr, err := secretbox.Parse(strings.Join(keys, ","))
	if err != nil {
		t.Fatal(err)
	}
	o.Keyring = kr
	return openWith(t, url, o)
}

// assertNoClearSecret searches every text column of every table for a secret in clear.
func assertNoClearSecret(t *testing.T, st *store.Store, secrets ...string) {
	t.Helper()
	dump, err := st.DumpForTest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{"whsec_", "whsk_"}, secrets...) {
		if strings.Contains(dump, s) {
			t.Errorf("the database holds %q in clear", s)
		}
	}
	if !strings.Contains(dump, secretbox.Prefix) {
		t.Error("the dump holds no sealed value: it did not read the endpoints")
	}
}

func secretsOf(t *testing.T, st *store.Store, env models.Env) map[string][2]string {
	t.Helper()
	eps, err := st.AllWebhookEndpoints(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]string{}
	for _, ep := range eps {
		out[ep.ID] = [2]string{ep.Secret, ep.PreviousSecret}
		if len(ep.Headers) > 0 {
			out[ep.ID+" headers"] = [2]string{fmt.Sprint(ep.Headers)}
		}
	}
	return out
}

// CONTRACT §25: secrets are sealed on every write path, read back on every read path
// (the attempt's raw join included); clear rows of the release before still read, a new
// key listed first seals new writes while the old key still opens, Reseal moves every
// secret (clear ones too) onto the first key, after which the first key alone reads
// everything; a keyring that opens nothing is refused by the check, naming key ids only.
func TestSecretsAtRest(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC()
		oldKey := testdb.Keys()
		newKey := secretbox.Generate()

		rotated := newEndpoint(t, db, "https://rotated.example/h", nil, true)
		rotated, err := webhook.RotateSecret(ctx, db.st, db.env, rotated.ID, "whsec_rotatedsecret", now, time.Hour, idempotency.Reply[webhook.SecretObject]{})
		if err != nil {
			t.Fatal(err)
		}
		// An ed25519 endpoint (CONTRACT §25) keeps its private key in the same column.
		private, _, err := signing.NewEd25519Key()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := webhook.CreateEndpoint(ctx, db.st, db.env, models.WebhookEndpoint{URL: "https://ed.example/h", Method: "POST",
			Enabled: true, Secret: private, Headers: map[string]string{"X-Api-Key": "hdrvalue123"}}, now, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		legacy := newEndpoint(t, db, "https://legacy.example/h", nil, true)
		// As the release before CONTRACT §25 kept it.
		exec(t, db, `UPDATE webhook_endpoints SET secret = 'whsec_legacyclear' WHERE id = ?`, legacy.ID)
		ev := newAccountEvent(t, db)
		byEndpoint := deliveriesByEndpoint(t, db, ev.ID)

		want := secretsOf(t, db.st, db.env)
		if want[rotated.ID] != [2]string{"whsec_rotatedsecret", rotated.PreviousSecret} || !strings.HasPrefix(rotated.PreviousSecret, "whsec_") ||
			want[legacy.ID][0] != "whsec_legacyclear" {
			t.Fatalf("secrets read back: %v", want)
		}
		for id, s := range want {
			if strings.HasSuffix(id, " headers") {
				continue
			}
			target, err := db.st.DeliveryForAttempt(ctx, byEndpoint[id].ID)
			if err != nil || target.Endpoint == nil || [2]string{target.Endpoint.Secret, target.Endpoint.PreviousSecret} != s ||
				fmt.Sprint(target.Endpoint.Headers) != want[id+" headers"][0] && len(target.Endpoint.Headers) > 0 {
				t.Fatalf("attempt's endpoint %s: %+v (%v), want %v", id, target.Endpoint, err, s)
			}
		}
		if len(want) != 4 {
			t.Fatalf("got %d entries, want 4 (3 endpoints, one with headers): %v", len(want), want)
		}
		if use, err := db.st.SecretKeyUse(ctx); err != nil || len(use.KeyIDs) != 1 || use.Clear != 1 {
			t.Fatalf("key use before migrate: %+v (%v)", use, err)
		}

		// A new key listed first: new writes use it, the old key still opens.
		both := openKeyed(t, db.url, newKey, oldKey)
		newID := keyID(t, newKey)
		fresh, err := webhook.CreateEndpoint(ctx, both, db.env, models.WebhookEndpoint{URL: "https://fresh.example/h", Method: "POST",
			Enabled: true, Secret: "whsec_freshsecret"}, now, idempotency.Reply[webhook.EndpointObject]{})
		if err != nil {
			t.Fatal(err)
		}
		want[fresh.ID] = [2]string{"whsec_freshsecret", ""}
		if got := secretsOf(t, both, db.env); !maps.Equal(got, want) {
			t.Fatalf("with both keys: %v, want %v", got, want)
		}
		use, err := both.SecretKeyUse(ctx)
		if err != nil || len(use.KeyIDs) != 2 || !slices.Contains(use.KeyIDs, newID) {
			t.Fatalf("key use after a write under the new key: %+v (%v)", use, err)
		}

		// migrate: everything onto the new key, once.
		if n, err := both.Reseal(ctx, 1); err != nil || n != 3 {
			t.Fatalf("reseal = %d, %v; want 3 (rotated and ed25519 under the old key, legacy in clear), in batches of 1", n, err)
		}
		if n, err := both.Reseal(ctx, store.ResealBatch); err != nil || n != 0 {
			t.Fatalf("second reseal = %d, %v; want 0", n, err)
		}
		assertNoClearSecret(t, both, "rotatedsecret", "legacyclear", "freshsecret", rotated.PreviousSecret, private[len("whsk_"):], "hdrvalue123", "X-Api-Key")

		onlyNew := openKeyed(t, db.url, newKey)
		if use, err := onlyNew.CheckKeyring(ctx); err != nil || len(use.KeyIDs) != 1 || use.KeyIDs[0] != newID || use.Clear != 0 {
			t.Fatalf("check with the new key alone: %+v, %v", use, err)
		}
		if got := secretsOf(t, onlyNew, db.env); !maps.Equal(got, want) {
			t.Fatalf("with the new key alone: %v, want %v", got, want)
		}

		// Keys that open nothing: refused, by key id.
		stranger := secretbox.Generate()
		_, err = openKeyed(t, db.url, stranger).CheckKeyring(ctx)
		if err == nil || !strings.Contains(err.Error(), newID) || strings.Contains(err.Error(), stranger) || strings.Contains(err.Error(), newKey) {
			t.Fatalf("check with a stranger key: %v", err)
		}
		if _, err := openKeyed(t, db.url).CheckKeyring(ctx); err == nil || !strings.Contains(err.Error(), "not set") {
			t.Fatalf("check without keys: %v", err)
		}
	})
}

// A sealed field is never written without a key: the write fails, its error shows
// neither the secret nor the driver's quote of it, and nothing is stored.
func TestSealedWriteWithoutKeyringFails(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		bare := openKeyed(t, db.url)
		_, err := webhook.CreateEndpoint(ctx, bare, db.env, models.WebhookEndpoint{URL: "https://bare.example/h", Method: "POST",
			Enabled: true, Secret: "whsec_nokeyring"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
		var sealErr *store.SealError
		if !errors.As(err, &sealErr) || !errors.Is(err, secretbox.ErrNoKeyring) || strings.Contains(err.Error(), "nokeyring") {
			t.Fatalf("create without keys: %v", err)
		}
		if eps, err := db.st.AllWebhookEndpoints(ctx, db.env); err != nil || len(eps) != 0 {
			t.Fatalf("endpoints after the refused write: %d (%v)", len(eps), err)
		}
	})
}

// Maps (custom headers) are sealed as JSON; an empty one is stored "".
func TestSealedMap(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		back, err := db.st.SealedMapRoundTripForTest(ctx, store.SealedMapForTest{ID: "a", Headers: map[string]string{"X-Api-Key": "hdrvalue123"}})
		if err != nil || back.Headers["X-Api-Key"] != "hdrvalue123" || len(back.Headers) != 1 {
			t.Fatalf("round trip: %+v (%v)", back, err)
		}
		if back, err = db.st.SealedMapRoundTripForTest(ctx, store.SealedMapForTest{ID: "b"}); err != nil || len(back.Headers) != 0 {
			t.Fatalf("empty map: %+v (%v)", back, err)
		}
		dump, err := db.st.DumpForTest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(dump, "hdrvalue123") || strings.Contains(dump, "X-Api-Key") {
			t.Error("a header is stored in clear")
		}
	})
}

func keyID(t *testing.T, key string) string {
	t.Helper()
	kr, err := secretbox.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	return kr.Current()
}

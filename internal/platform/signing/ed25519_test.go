package signing

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A fixed ed25519 vector: the seed 0x00..0x1f signing the specification's message. The
// clients' tests (clients/go, clients/typescript) verify the same signature with the same
// public key, so the three implementations agree.
const (
	vecPrivate = "whsk_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	vecPublic  = "whpk_A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
	vecSigV1a  = "v1a,yoUrgEkc12aGqm0n4Sydmdz55xJfTz4AsAgieHFjmkR7LJtqVCZOQYzvvHjI5kAey+r4iaBGxTFRrl2iBQxtDQ=="
	// The TypeScript client's vector: the same key and message id over an event body.
	vecEventBody = `{"event":{"id":"msg_p5jXN8AQM9LWM0D4loKWxJek","time":"1614265330","type":"account-created"}}`
	vecEventV1a  = "v1a,0THOYMKQaeKwAPuKsmQl2yF858PmAUqa4GV04D0kwFME79vKVaFchys9aJK3z6nxI8S+IbS4StGw8jaxz5CVCA=="
)

func TestEd25519Vector(t *testing.T) {
	pub, err := PublicKey(vecPrivate)
	if err != nil || pub != vecPublic {
		t.Fatalf("PublicKey = %q, %v; want %q", pub, err, vecPublic)
	}
	if got := Sign(vecPrivate, vecID, time.Unix(vecTS, 0), []byte(vecBody)); got != vecSigV1a {
		t.Fatalf("Sign = %q, want %q", got, vecSigV1a)
	}
	if got := Sign(vecPrivate, vecID, time.Unix(vecTS, 0), []byte(vecEventBody)); got != vecEventV1a {
		t.Fatalf("Sign(event body) = %q, want %q", got, vecEventV1a)
	}
}

// A v1a signature is what a receiver with nothing but crypto/ed25519 and the public key
// checks: the signature of "id.timestamp.body".
func TestEd25519SignVerifiesWithPlainCrypto(t *testing.T) {
	private, public, err := NewEd25519Key()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(private, PrivateKeyPrefix) || !strings.HasPrefix(public, PublicKeyPrefix) {
		t.Fatalf("keys %q %q lack their prefixes", private, public)
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(private, PrivateKeyPrefix))
	if err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("private key holds %d bytes (%v), want a %d-byte seed", len(seed), err, ed25519.SeedSize)
	}
	if derived, _ := PublicKey(private); derived != public {
		t.Fatalf("PublicKey(private) = %q, want %q", derived, public)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(public, PublicKeyPrefix))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		t.Fatalf("public key holds %d bytes (%v)", len(raw), err)
	}
	ts := time.Unix(vecTS, 0)
	entry := Sign(private, vecID, ts, []byte(vecBody))
	b64, ok := strings.CutPrefix(entry, "v1a,")
	if !ok {
		t.Fatalf("Sign with a whsk_ key = %q, want a v1a entry", entry)
	}
	sig, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte(vecID + "." + strconv.FormatInt(vecTS, 10) + "." + vecBody)
	if !ed25519.Verify(ed25519.PublicKey(raw), msg, sig) {
		t.Fatal("crypto/ed25519 does not verify the v1a signature")
	}
	if ed25519.Verify(ed25519.PublicKey(raw), append(msg, ' '), sig) {
		t.Fatal("the signature verifies another body")
	}
}

func TestNewEd25519KeysDiffer(t *testing.T) {
	a, _, _ := NewEd25519Key()
	b, _, _ := NewEd25519Key()
	if a == b {
		t.Fatal("two private keys are equal")
	}
}

// Header signs with every key in its own scheme, the current one first: during a change
// of scheme a receiver finds the entry it can check.
func TestHeaderMixesSchemes(t *testing.T) {
	ts := time.Unix(vecTS, 0)
	got := Header([]string{vecPrivate, vecSecret}, vecID, ts, []byte(vecBody))
	if want := vecSigV1a + " " + vecSig; got != want {
		t.Fatalf("Header = %q, want %q", got, want)
	}
}

func TestSchemeAndNewKey(t *testing.T) {
	for _, scheme := range []string{SchemeHMAC, SchemeEd25519} {
		k, err := NewKey(scheme)
		if err != nil {
			t.Fatal(err)
		}
		if Scheme(k) != scheme {
			t.Errorf("Scheme(NewKey(%s)) = %s", scheme, Scheme(k))
		}
	}
}

func TestBadKeys(t *testing.T) {
	for _, k := range []string{"", "whsk_", "whsk_!!!", "whsk_AAAA", vecSecret, vecPublic} {
		if _, err := PublicKey(k); !errors.Is(err, ErrBadPrivateKey) {
			t.Errorf("PublicKey(%q) = %v, want ErrBadPrivateKey", k, err)
		}
	}
	for _, k := range []string{"", "whpk_", "whpk_AAAA", vecPrivate, "whpk_" + base64.StdEncoding.EncodeToString(make([]byte, 31))} {
		if _, err := ParsePublicKey(k); !errors.Is(err, ErrBadPublicKey) {
			t.Errorf("ParsePublicKey(%q) = %v, want ErrBadPublicKey", k, err)
		}
	}
}

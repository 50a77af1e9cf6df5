package revops

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The vector of internal/platform/signing (produced by Revops's own signing): the
// private key is the seed 0x00..0x1f; its public key and the v1a signature of the
// Standard Webhooks test message are what Revops sends and shows.
const (
	vecPublicKey = "whpk_A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
	vecID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS        = 1614265330
	vecBody      = `{"test": 2432232314}`
	vecSigV1a    = "v1a,yoUrgEkc12aGqm0n4Sydmdz55xJfTz4AsAgieHFjmkR7LJtqVCZOQYzvvHjI5kAey+r4iaBGxTFRrl2iBQxtDQ=="
)

// atVector is a verifier of key whose clock reads the vector's timestamp.
func atVector(t *testing.T, key string) *Webhooks {
	t.Helper()
	w, err := NewWebhooks(key)
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return time.Unix(vecTS, 0) }
	return w
}

func vecHeader(sigs ...string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", vecID)
	h.Set("webhook-timestamp", strconv.Itoa(vecTS))
	h.Set("webhook-signature", strings.Join(sigs, " "))
	return h
}

// signEd25519 is Revops's v1a signing, written again from the specification.
func signEd25519(priv ed25519.PrivateKey, id string, ts int64, body string) string {
	return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte(id+"."+strconv.FormatInt(ts, 10)+"."+body)))
}

func newKeyPair(t *testing.T) (ed25519.PrivateKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return priv, "whpk_" + base64.StdEncoding.EncodeToString(pub)
}

func TestVerifyV1aVector(t *testing.T) {
	w := atVector(t, vecPublicKey)
	if _, err := w.Verify(vecHeader(vecSigV1a), []byte(vecBody)); err != nil {
		t.Fatalf("the vector does not verify: %v", err)
	}
	// An HMAC entry, even the vector's own, proves nothing to a public key.
	if _, err := w.Verify(vecHeader("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="), []byte(vecBody)); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("a v1 entry alone: %v", err)
	}
	if _, err := w.Verify(vecHeader(vecSigV1a), []byte(vecBody+" ")); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("a tampered body: %v", err)
	}
}

// During a rotation or a change of scheme Revops sends a signature under each key:
// either public key (or the old secret) verifies; a third key does not.
func TestVerifyV1aDuringARotation(t *testing.T) {
	body := dealSignedBody + dealJSON("d1") + "}"
	ts := time.Now().Unix()
	newPriv, newPub := newKeyPair(t)
	oldPriv, oldPub := newKeyPair(t)
	_, otherPub := newKeyPair(t)
	h := signedHeader(ts, signEd25519(newPriv, "e1", ts, body), signEd25519(oldPriv, "e1", ts, body), sign(oldSecret, "e1", ts, body))
	for _, key := range []string{newPub, oldPub, oldSecret} {
		w, err := NewWebhooks(key)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := w.Verify(h, []byte(body))
		if err != nil || ev.Deal == nil || ev.Deal.ID != "d1" {
			t.Errorf("key %.10s…: %+v %v", key, ev, err)
		}
	}
	w, _ := NewWebhooks(otherPub)
	if _, err := w.Verify(h, []byte(body)); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("a third key: %v", err)
	}
	// The timestamp is checked for v1a as for v1.
	old := ts - 6*60
	if _, err := w.Verify(signedHeader(old, signEd25519(newPriv, "e1", old, body)), []byte(body)); !errors.Is(err, ErrWebhookTimestamp) {
		t.Fatalf("an old timestamp: %v", err)
	}
}

func TestNewWebhooksRefusesABadPublicKey(t *testing.T) {
	for _, k := range []string{"whpk_", "whpk_AAAA", "whpk_not base64!"} {
		if _, err := NewWebhooks(k); err == nil {
			t.Errorf("NewWebhooks(%q) accepted it", k)
		}
	}
}

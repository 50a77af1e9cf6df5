package store_test

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// previousRelease is the sealer of the release before values were bound to their row
// (internal/platform/secretbox at f47e4a3, its Seal and Open for one key, unchanged but
// for the receiver): what a process of that release writes into, and reads from, the
// sealed columns while it runs beside this one (CONTRACT §25, rolling upgrades).
type previousRelease struct {
	id   string
	aead cipher.AEAD
}

const previousPrefix = "enc:v1:"

var previousAAD = []byte("revops secret v1")

func previousSealer(t *testing.T, b64key, id string) previousRelease {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64key)
	if err != nil {
		t.Fatal(err)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return previousRelease{id: id, aead: aead}
}

func (p previousRelease) Seal(plaintext string) (string, error) {
	if plaintext == "" {
		return "", nil
	}
	nonce := make([]byte, p.aead.NonceSize(), p.aead.NonceSize()+len(plaintext)+p.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	box := p.aead.Seal(nonce, nonce, []byte(plaintext), previousAAD)
	return previousPrefix + p.id + ":" + base64.StdEncoding.EncodeToString(box), nil
}

func (p previousRelease) Open(v string) (string, error) {
	if !strings.HasPrefix(v, previousPrefix) {
		return v, nil
	}
	id, body, ok := strings.Cut(v[len(previousPrefix):], ":")
	if !ok {
		return "", errors.New("sealed value without key id")
	}
	if id != p.id {
		return "", fmt.Errorf("value sealed under key %s, which REVOPS_ENCRYPTION_KEYS does not list (it lists %s)", id, p.id)
	}
	box, err := base64.StdEncoding.DecodeString(body)
	if err != nil || len(box) < p.aead.NonceSize() {
		return "", fmt.Errorf("value sealed under key %s is malformed", id)
	}
	n := p.aead.NonceSize()
	plain, err := p.aead.Open(nil, box[:n], box[n:], previousAAD)
	if err != nil {
		return "", fmt.Errorf("value sealed under key %s does not open: altered, or another key with the same id", id)
	}
	return string(plain), nil
}

func (p previousRelease) mustSeal(t *testing.T, plaintext string) string {
	t.Helper()
	v, err := p.Seal(plaintext)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Package secretbox seals the secrets Revops keeps in its database (signing secrets,
// ed25519 private keys, custom header values) with AES-256-GCM under the keys of
// REVOPS_ENCRYPTION_KEYS (CONTRACT §25). The list's first key seals, every key opens, so
// keys rotate: list a new key first, re-seal (`revops migrate`), drop the old one.
//
// A sealed value names its key and its form (place.go): "enc:v1:<key id>:bound:<base64 of
// nonce and ciphertext>", bound to the table, column and row it is kept in, or
// "enc:v1:<key id>:<base64>", the unbound form of the releases before, which opens
// wherever it is copied. A value without the prefix is clear (stored before encryption).
// Errors name key ids, never keys or plaintext.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every sealed value.
const Prefix = "enc:v1:"

// KeySize is the length of a key: AES-256.
const KeySize = 32

// IDLen is the length of a key id (hex characters).
const IDLen = 8

// unboundAAD is the additional data of the unbound form: it binds a value to Revops
// (domain separation) but not to its place, so a value copied to another row opens there.
var unboundAAD = []byte("revops secret v1")

// ErrNoKeyring: a sealed value met a process without keys.
var ErrNoKeyring = errors.New("no encryption keys (REVOPS_ENCRYPTION_KEYS is not set)")

// Keyring is the parsed key list: the first key seals, every key opens.
type Keyring struct {
	keys []key
}

type key struct {
	id   string
	aead cipher.AEAD
	mac  []byte // the HMAC key of Digest, derived from the key (never the key itself)
}

// Parse reads a comma-separated list of base64 keys of 32 bytes each (blanks around
// commas ignored). An empty list is no keyring (nil, nil).
func Parse(list string) (*Keyring, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	parts := strings.Split(list, ",")
	kr := &Keyring{}
	seen := map[string]bool{}
	for i, p := range parts {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("encryption key %d of %d is not base64 (generate one with `openssl rand -base64 32`)", i+1, len(parts))
		}
		if len(raw) != KeySize {
			return nil, fmt.Errorf("encryption key %d of %d is %d bytes, want %d (generate one with `openssl rand -base64 32`)", i+1, len(parts), len(raw), KeySize)
		}
		k, err := newKey(raw)
		if err != nil {
			return nil, err
		}
		if seen[k.id] {
			return nil, fmt.Errorf("encryption key %d of %d (id %s) is listed twice", i+1, len(parts), k.id)
		}
		seen[k.id] = true
		kr.keys = append(kr.keys, k)
	}
	return kr, nil
}

func newKey(raw []byte) (key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, fmt.Errorf("encryption key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, fmt.Errorf("encryption key: %w", err)
	}
	mac := sha256.Sum256(append([]byte("revops-digest-v1"), raw...))
	return key{id: KeyID(raw), aead: aead, mac: mac[:]}, nil
}

// KeyID is the short public name of a key: what sealed values and messages show of it.
func KeyID(raw []byte) string {
	sum := sha256.Sum256(append([]byte("revops-key-id"), raw...))
	return hex.EncodeToString(sum[:])[:IDLen]
}

// Generate makes a new random key, base64 as REVOPS_ENCRYPTION_KEYS lists it.
func Generate() string {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw) // never fails (crypto/rand)
	return base64.StdEncoding.EncodeToString(raw)
}

// IDs are the keyring's key ids, the sealing key first.
func (kr *Keyring) IDs() []string {
	if kr == nil {
		return nil
	}
	ids := make([]string, len(kr.keys))
	for i, k := range kr.keys {
		ids[i] = k.id
	}
	return ids
}

// Current is the id of the key that seals.
func (kr *Keyring) Current() string {
	return kr.keys[0].id
}

// Has tells whether the keyring holds the key with this id.
func (kr *Keyring) Has(id string) bool {
	if kr == nil {
		return false
	}
	for _, k := range kr.keys {
		if k.id == id {
			return true
		}
	}
	return false
}

// Seal encrypts plaintext under the first key, bound to the place it is kept at: it opens
// there only (CONTRACT §25). "" stays "" (nothing to hide).
func (kr *Keyring) Seal(plaintext string, at Place) (string, error) {
	if plaintext == "" {
		return "", nil
	}
	if err := at.check(); err != nil {
		return "", err
	}
	return kr.seal(plaintext, at.aad(), BoundMark)
}

// SealUnbound encrypts plaintext under the first key in the unbound form, which the
// release before this one reads: written until every process runs this one (Place).
func (kr *Keyring) SealUnbound(plaintext string) (string, error) {
	return kr.seal(plaintext, unboundAAD, "")
}

func (kr *Keyring) seal(plaintext string, aad []byte, mark string) (string, error) {
	if plaintext == "" {
		return "", nil
	}
	if kr == nil {
		return "", ErrNoKeyring
	}
	k := kr.keys[0]
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	box := k.aead.Seal(nonce, nonce, []byte(plaintext), aad)
	return Prefix + k.id + ":" + mark + base64.StdEncoding.EncodeToString(box), nil
}

// IsSealed tells a sealed value from a clear one.
func IsSealed(v string) bool { return strings.HasPrefix(v, Prefix) }

// Open returns the plaintext of a sealed value kept at at, in either form; a clear value
// is returned as it is. A bound value opens at its own place only: moved to another row or
// column it is refused (the caller names the place; this error names the key id only).
func (kr *Keyring) Open(v string, at Place) (string, error) {
	if !IsSealed(v) {
		return v, nil
	}
	id, body, ok := strings.Cut(v[len(Prefix):], ":")
	if !ok {
		return "", errors.New("sealed value without key id")
	}
	aad, bound := unboundAAD, strings.HasPrefix(body, BoundMark)
	if bound {
		if err := at.check(); err != nil {
			return "", err
		}
		aad, body = at.aad(), body[len(BoundMark):]
	}
	if kr == nil {
		return "", fmt.Errorf("value sealed under key %s: %w", id, ErrNoKeyring)
	}
	for _, k := range kr.keys {
		if k.id != id {
			continue
		}
		box, err := base64.StdEncoding.DecodeString(body)
		if err != nil || len(box) < k.aead.NonceSize() {
			return "", fmt.Errorf("value sealed under key %s is malformed", id)
		}
		n := k.aead.NonceSize()
		plain, err := k.aead.Open(nil, box[:n], box[n:], aad)
		if err != nil && bound {
			return "", fmt.Errorf("value sealed under key %s does not open here: sealed for another row or column (copied), altered, or another key with the same id", id)
		}
		if err != nil {
			return "", fmt.Errorf("value sealed under key %s does not open: altered, or another key with the same id", id)
		}
		return string(plain), nil
	}
	return "", fmt.Errorf("value sealed under key %s, which REVOPS_ENCRYPTION_KEYS does not list (it lists %s)", id, strings.Join(kr.IDs(), ", "))
}

// DigestPrefix starts every keyed digest.
const DigestPrefix = "mac:v1:"

// Digest is a keyed digest of data under the sealing key: "mac:v1:<key id>:<hex
// HMAC-SHA256>". It stands where a plain hash of data containing a secret would be
// kept (an idempotency fingerprint of a body carrying header values, CONTRACT §25): a
// plain hash lets whoever reads the table confirm a guessed secret offline, a keyed one
// does not. Without a keyring, data is returned as it is.
func (kr *Keyring) Digest(data string) string {
	if kr == nil {
		return data
	}
	return kr.keys[0].digest(data)
}

func (k key) digest(data string) string {
	h := hmac.New(sha256.New, k.mac)
	h.Write([]byte(data))
	return DigestPrefix + k.id + ":" + hex.EncodeToString(h.Sum(nil))
}

// DigestMatches tells whether kept is data's Digest under one of the keyring's keys, so
// that a key rotation does not change the answer while the old key is listed. A kept
// value without the prefix (kept before digests were keyed, or by a process without
// keys) is compared with data itself.
func (kr *Keyring) DigestMatches(kept, data string) bool {
	if !strings.HasPrefix(kept, DigestPrefix) {
		return kept == data
	}
	id, _, _ := strings.Cut(kept[len(DigestPrefix):], ":")
	if kr == nil {
		return false
	}
	for _, k := range kr.keys {
		if k.id == id {
			return hmac.Equal([]byte(k.digest(data)), []byte(kept))
		}
	}
	return false
}

// Package signing signs webhook requests per the Standard Webhooks specification
// (https://www.standardwebhooks.com), in either of its schemes (CONTRACT §8, §25):
//   - symmetric: an HMAC-SHA256 of "id.timestamp.body" keyed by the base64 secret after
//     its "whsec_" prefix, sent as "v1,<base64>";
//   - asymmetric: an ed25519 signature of the same text by the private key
//     "whsk_<base64 of the 32-byte seed>", sent as "v1a,<base64>" and verified with the
//     public key "whpk_<base64 of the 32-byte public key>".
//
// A key's scheme is its prefix, so that the columns that hold a secret hold either kind
// and a rotation or a change of scheme needs nothing more than the previous key.
package signing

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Key prefixes of the specification: an HMAC secret, an ed25519 private key (seed) and
// an ed25519 public key.
const (
	SecretPrefix     = "whsec_"
	PrivateKeyPrefix = "whsk_"
	PublicKeyPrefix  = "whpk_"
)

// The signing schemes, as the API names them (CONTRACT §25).
const (
	SchemeHMAC    = "hmac-sha256"
	SchemeEd25519 = "ed25519"
)

// Signature versions of webhook-signature entries.
const (
	versionHMAC    = "v1"
	versionEd25519 = "v1a"
)

// secretBytes is the key length of new secrets (the specification asks for 24 to 64).
const secretBytes = 32

// Key faults.
var (
	ErrBadSecret     = errors.New("signing secret is not whsec_ followed by base64")
	ErrBadPrivateKey = errors.New("signing key is not whsk_ followed by the base64 of a 32-byte ed25519 seed")
	ErrBadPublicKey  = errors.New("public key is not whpk_ followed by the base64 of a 32-byte ed25519 public key")
)

// NewSecret makes a fresh HMAC signing secret.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate signing secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// NewEd25519Key makes a fresh ed25519 key pair: the private key (kept by Revops, never
// shown) and the public key receivers verify with.
func NewEd25519Key() (private, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generate ed25519 key: %w", err)
	}
	return PrivateKeyPrefix + base64.StdEncoding.EncodeToString(priv.Seed()),
		PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub), nil
}

// NewKey makes a fresh key of scheme (SchemeHMAC or SchemeEd25519).
func NewKey(scheme string) (string, error) {
	if scheme == SchemeEd25519 {
		private, _, err := NewEd25519Key()
		return private, err
	}
	return NewSecret()
}

// Scheme is the scheme a stored key signs with: its prefix tells.
func Scheme(key string) string {
	if strings.HasPrefix(key, PrivateKeyPrefix) {
		return SchemeEd25519
	}
	return SchemeHMAC
}

// Key decodes a secret into its HMAC key.
func Key(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrBadSecret
	}
	return key, nil
}

// privateKey decodes a "whsk_" key.
func privateKey(key string) (ed25519.PrivateKey, error) {
	rest, ok := strings.CutPrefix(key, PrivateKeyPrefix)
	if !ok {
		return nil, ErrBadPrivateKey
	}
	seed, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, ErrBadPrivateKey
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// PublicKey is the "whpk_" public key of a "whsk_" private key.
func PublicKey(private string) (string, error) {
	priv, err := privateKey(private)
	if err != nil {
		return "", err
	}
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)), nil
}

// ParsePublicKey decodes a "whpk_" public key.
func ParsePublicKey(public string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(public, PublicKeyPrefix)
	if !ok {
		return nil, ErrBadPublicKey
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, ErrBadPublicKey
	}
	return ed25519.PublicKey(b), nil
}

// signedContent is what both schemes sign: "id.timestamp.body".
func signedContent(msgID string, ts time.Time, body []byte) []byte {
	head := msgID + "." + strconv.FormatInt(ts.Unix(), 10) + "."
	return append([]byte(head), body...)
}

// Sign returns one signature of "id.timestamp.body" by key, in the scheme its prefix
// names: "v1a,<base64 ed25519 signature>" for a "whsk_" key, otherwise
// "v1,<base64 HMAC-SHA256>". A key that does not decode signs with its raw bytes as an
// HMAC key, so a damaged setting still yields a (failing) signature instead of an
// unsigned request; Revops only stores keys made by NewSecret and NewEd25519Key.
func Sign(key, msgID string, ts time.Time, body []byte) string {
	msg := signedContent(msgID, ts, body)
	if strings.HasPrefix(key, PrivateKeyPrefix) {
		if priv, err := privateKey(key); err == nil {
			return versionEd25519 + "," + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, msg))
		}
	}
	mac, err := Key(key)
	if err != nil {
		mac = []byte(key)
	}
	h := hmac.New(sha256.New, mac)
	h.Write(msg)
	return versionHMAC + "," + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// Header is the webhook-signature value for every key that currently signs (the current
// one first, then the previous one during a rotation or a change of scheme),
// space-separated as the specification allows.
func Header(keys []string, msgID string, ts time.Time, body []byte) string {
	sigs := make([]string, 0, len(keys))
	for _, k := range keys {
		if k != "" {
			sigs = append(sigs, Sign(k, msgID, ts, body))
		}
	}
	return strings.Join(sigs, " ")
}

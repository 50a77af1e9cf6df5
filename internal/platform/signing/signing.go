// Package signing signs webhook requests per the Standard Webhooks specification
// (https://www.standardwebhooks.com): an HMAC-SHA256 of "id.timestamp.body" keyed by the
// base64 secret after its "whsec_" prefix, sent as "v1,<base64>" in webhook-signature.
package signing

import (
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

// SecretPrefix starts every signing secret, as the specification's libraries expect.
const SecretPrefix = "whsec_"

// secretBytes is the key length of new secrets (the specification asks for 24 to 64).
const secretBytes = 32

// ErrBadSecret is a secret that is not "whsec_" followed by base64.
var ErrBadSecret = errors.New("signing secret is not whsec_ followed by base64")

// NewSecret makes a fresh signing secret.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate signing secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// Key decodes a secret into its HMAC key.
func Key(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrBadSecret
	}
	return key, nil
}

// Sign returns one signature "v1,<base64 HMAC-SHA256 of "id.timestamp.body">".
// A secret that does not decode signs with its raw bytes, so a damaged setting still
// yields a (failing) signature instead of an unsigned request; Revops only stores
// secrets made by NewSecret.
func Sign(secret, msgID string, ts time.Time, body []byte) string {
	key, err := Key(secret)
	if err != nil {
		key = []byte(secret)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Header is the webhook-signature value for every secret that currently signs (the
// current one first, then the previous one during a rotation), space-separated as the
// specification allows.
func Header(secrets []string, msgID string, ts time.Time, body []byte) string {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if s != "" {
			sigs = append(sigs, Sign(s, msgID, ts, body))
		}
	}
	return strings.Join(sigs, " ")
}

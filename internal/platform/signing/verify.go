package signing

import (
	"crypto/ed25519"
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Verification failures.
var (
	ErrNoSignature = errors.New("no matching signature")
	ErrTimestamp   = errors.New("timestamp missing or outside the tolerance")
)

// Verify checks a received webhook as a Standard Webhooks receiver does: the timestamp
// within tolerance of now, and one of the space-separated signatures matching key — a
// "v1" entry for a "whsec_" secret, a "v1a" entry for a "whpk_" public key (the receiver
// of an ed25519 endpoint holds only that). Entries of the other scheme are skipped, as
// the specification asks of unknown versions.
func Verify(key, msgID, timestamp, signatures string, body []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	if strings.HasPrefix(key, PublicKeyPrefix) {
		return verifyEd25519(key, signedContent(msgID, ts, body), signatures)
	}
	want := Sign(key, msgID, ts, body)
	for _, sig := range strings.Fields(signatures) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return ErrNoSignature
}

// verifyEd25519 looks for a "v1a" entry that public verifies over msg.
func verifyEd25519(public string, msg []byte, signatures string) error {
	pub, err := ParsePublicKey(public)
	if err != nil {
		return err
	}
	for _, entry := range strings.Fields(signatures) {
		b64, ok := strings.CutPrefix(entry, versionEd25519+",")
		if !ok {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && ed25519.Verify(pub, msg, sig) {
			return nil
		}
	}
	return ErrNoSignature
}

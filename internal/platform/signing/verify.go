package signing

import (
	"crypto/hmac"
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
// within tolerance of now, and one of the space-separated v1 signatures matching secret.
func Verify(secret, msgID, timestamp, signatures string, body []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := Sign(secret, msgID, ts, body)
	for _, sig := range strings.Fields(signatures) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return ErrNoSignature
}

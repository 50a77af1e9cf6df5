package signing

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestVerifyEd25519(t *testing.T) {
	cur, curPub, _ := NewEd25519Key()
	old, oldPub, _ := NewEd25519Key()
	_, otherPub, _ := NewEd25519Key()
	hmacOnly, _ := NewSecret()
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"event":{"id":"e1"}}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	both := Header([]string{cur, old}, "e1", now, body)
	switched := Header([]string{cur, hmacOnly}, "e1", now, body) // hmac → ed25519
	for _, tc := range []struct {
		name, key, id, ts, sigs string
		body                    []byte
		want                    error
	}{
		{"current", curPub, "e1", ts, both, body, nil},
		{"previous during rotation", oldPub, "e1", ts, both, body, nil},
		{"new key after a change of scheme", curPub, "e1", ts, switched, body, nil},
		{"old secret after a change of scheme", hmacOnly, "e1", ts, switched, body, nil},
		{"other key", otherPub, "e1", ts, both, body, ErrNoSignature},
		{"only v1 entries", curPub, "e1", ts, Header([]string{hmacOnly}, "e1", now, body), body, ErrNoSignature},
		{"tampered body", curPub, "e1", ts, both, []byte(`{}`), ErrNoSignature},
		{"other id", curPub, "e2", ts, both, body, ErrNoSignature},
		{"garbage entry", curPub, "e1", ts, "v1a,!!! v1a,AAAA", body, ErrNoSignature},
		{"stale", curPub, "e1", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10), both, body, ErrTimestamp},
		{"bad public key", "whpk_AAAA", "e1", ts, both, body, ErrBadPublicKey},
	} {
		err := Verify(tc.key, tc.id, tc.ts, tc.sigs, tc.body, now, 5*time.Minute)
		if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

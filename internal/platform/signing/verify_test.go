package signing

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	secret, _ := NewSecret()
	old, _ := NewSecret()
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"event":{"id":"e1"}}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	both := Header([]string{old, secret}, "e1", now, body)
	for _, tc := range []struct {
		name, secret, id, ts, sigs string
		body                       []byte
		want                       error
	}{
		{"current", secret, "e1", ts, both, body, nil},
		{"previous during rotation", old, "e1", ts, both, body, nil},
		{"other secret", "whsec_" + "AAAA", "e1", ts, both, body, ErrNoSignature},
		{"tampered body", secret, "e1", ts, both, []byte(`{}`), ErrNoSignature},
		{"other id", secret, "e2", ts, both, body, ErrNoSignature},
		{"stale", secret, "e1", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10), both, body, ErrTimestamp},
		{"garbage timestamp", secret, "e1", "soon", both, body, ErrTimestamp},
	} {
		err := Verify(tc.secret, tc.id, tc.ts, tc.sigs, tc.body, now, 5*time.Minute)
		if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

package signing

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// The test vector of the Standard Webhooks reference libraries.
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = 1614265330
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesSpecVector(t *testing.T) {
	got := Sign(vecSecret, vecID, time.Unix(vecTS, 0), []byte(vecBody))
	if got != vecSig {
		t.Fatalf("Sign = %q, want %q", got, vecSig)
	}
}

func TestSignDependsOnEveryInput(t *testing.T) {
	base := Sign(vecSecret, vecID, time.Unix(vecTS, 0), []byte(vecBody))
	other, _ := NewSecret()
	cases := map[string]string{
		"secret":    Sign(other, vecID, time.Unix(vecTS, 0), []byte(vecBody)),
		"id":        Sign(vecSecret, vecID+"x", time.Unix(vecTS, 0), []byte(vecBody)),
		"timestamp": Sign(vecSecret, vecID, time.Unix(vecTS+1, 0), []byte(vecBody)),
		"body":      Sign(vecSecret, vecID, time.Unix(vecTS, 0), []byte(vecBody+" ")),
	}
	for name, sig := range cases {
		if sig == base {
			t.Errorf("changing the %s does not change the signature", name)
		}
	}
}

func TestHeaderDuringRotation(t *testing.T) {
	cur, _ := NewSecret()
	ts := time.Unix(vecTS, 0)
	tests := []struct {
		name    string
		secrets []string
		want    []string
	}{
		{"one secret", []string{cur}, []string{Sign(cur, vecID, ts, []byte(vecBody))}},
		{"current and previous", []string{cur, vecSecret}, []string{Sign(cur, vecID, ts, []byte(vecBody)), vecSig}},
		{"empty previous skipped", []string{cur, ""}, []string{Sign(cur, vecID, ts, []byte(vecBody))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Header(tt.secrets, vecID, ts, []byte(vecBody))
			if want := strings.Join(tt.want, " "); got != want {
				t.Fatalf("Header = %q, want %q", got, want)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	if !strings.HasPrefix(a, SecretPrefix) {
		t.Fatalf("secret %q lacks the whsec_ prefix", a)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, SecretPrefix))
	if err != nil || len(key) < 24 || len(key) > 64 {
		t.Fatalf("secret key: %d bytes, err %v; want 24..64 bytes of base64", len(key), err)
	}
}

func TestKeyRejectsBadSecrets(t *testing.T) {
	for _, s := range []string{"", "whsec_", "whsec_!!!", "not base64 at all"} {
		if _, err := Key(s); err == nil {
			t.Errorf("Key(%q) accepted a bad secret", s)
		}
	}
	if _, err := Key(vecSecret); err != nil {
		t.Errorf("Key(vector) = %v", err)
	}
}

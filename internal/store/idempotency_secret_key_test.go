package store

import (
	"errors"
	"strings"
	"testing"
)

// An ed25519 endpoint's answers show its public key only (CONTRACT §25): they are kept
// as they are, naming no endpoint (there is no secret to fill in on replay), and an
// answer that would hold the private key — whole, or the base64 of its seed — is refused.
func TestWithoutSecretOfAnEd25519Key(t *testing.T) {
	const (
		private = "whsk_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
		public  = "whpk_A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
	)
	seed := strings.TrimPrefix(private, "whsk_")
	answer := `{"id":"ep","signing":"ed25519","public_key":"` + public + `"}`
	k, err := withoutSecret([]byte(answer), "ep", private)
	if err != nil || string(k.body) != answer || k.secretEndpointID != nil {
		t.Fatalf("kept %q (endpoint %v), %v; want the answer as it is", k.body, k.secretEndpointID, err)
	}
	for _, leak := range []string{
		`{"secret":"` + private + `"}`,
		`{"note":"` + seed + `"}`,
		`{"public_key":"` + public + `","x":"` + private + `"}`,
	} {
		if _, err := withoutSecret([]byte(leak), "ep", private); !errors.Is(err, errKeptSecret) {
			t.Errorf("withoutSecret(%s) = %v, want errKeptSecret", leak, err)
		}
	}
	// An hmac secret is still kept as a placeholder, and its base64 alone refused too.
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	if k, err := withoutSecret([]byte(`{"secret":"`+secret+`"}`), "ep", secret); err != nil || string(k.body) != `{"secret":"<redacted>"}` {
		t.Fatalf("hmac: kept %q, %v", k.body, err)
	}
	if _, err := withoutSecret([]byte(`{"x":"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`), "ep", secret); !errors.Is(err, errKeptSecret) {
		t.Fatalf("hmac base64 alone: %v, want errKeptSecret", err)
	}
}

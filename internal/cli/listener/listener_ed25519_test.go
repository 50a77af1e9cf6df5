package listener

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/testkit/syncbuf"
)

// An ed25519 endpoint's deliveries (CONTRACT §25) verify with its public key; another
// public key, or an HMAC secret, does not verify them. send signs with a whsk_ key as
// Revops does (signing.Header dispatches on the prefix).
func TestListenerVerifiesV1a(t *testing.T) {
	private, public, _ := signing.NewEd25519Key()
	_, otherPublic, _ := signing.NewEd25519Key()
	secret, _ := signing.NewSecret()
	for _, tc := range []struct {
		name    string
		keys    []string
		printed string
	}{
		{"its public key", []string{public}, "signature ok"},
		{"among other keys", []string{secret, otherPublic, public}, "signature ok"},
		{"another public key", []string{otherPublic}, "NOT VERIFIED"},
		{"a secret only", []string{secret}, "NOT VERIFIED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &syncbuf.Buffer{}
			h := &Handler{Secrets: func() []string { return tc.keys }, Ack: "ok", Out: out}
			srv := httptest.NewTLSServer(h)
			defer srv.Close()
			if status, _ := send(t, srv, http.MethodPost, private, body); status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
			if line := out.String(); !strings.Contains(line, tc.printed) {
				t.Errorf("printed %q, want %q", line, tc.printed)
			}
		})
	}
}

package revops

import (
	"bytes"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// receiverCAFile is the certificate of net/http/httptest's TLS servers, which the
// integration test's webhook receiver uses. A Revops that runs the integration suite must
// trust it for webhook deliveries: start it with REVOPS_WEBHOOK_CA_FILE=<this file>.
const receiverCAFile = "testdata/httptest-cert.pem"

// TestReceiverCertificateFile keeps the file equal to the certificate httptest serves
// (it could change with a Go release); UPDATE_TESTDATA=1 rewrites it.
func TestReceiverCertificateFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	want := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if os.Getenv("UPDATE_TESTDATA") == "1" {
		if err := os.WriteFile(receiverCAFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(receiverCAFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not httptest's certificate (%v): run UPDATE_TESTDATA=1 go test -run TestReceiverCertificateFile", receiverCAFile, err)
	}
}

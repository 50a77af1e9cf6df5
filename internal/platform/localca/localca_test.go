package localca

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestIssuedCertificateIsTrustedThroughTheCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Ensure(dir)
	if err != nil || !again.cert.Equal(ca.cert) {
		t.Fatalf("second Ensure made another CA: %v", err)
	}
	cert, err := ca.Issue("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hi") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()

	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: again.Pool()}}}
	res, err := trusting.Get(srv.URL)
	if err != nil {
		t.Fatalf("client trusting the CA: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "hi" {
		t.Errorf("body %q", b)
	}
	other, _ := Ensure(t.TempDir())
	stranger := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: other.Pool()}}}
	if _, err := stranger.Get(srv.URL); err == nil {
		t.Error("a client trusting another CA accepted the certificate")
	}
}

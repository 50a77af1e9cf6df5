package dashboard_test

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// receiver is a real HTTPS webhook receiver that answers with a fixed status and body and
// records what it got.
type receiver struct {
	srv    *httptest.Server
	caFile string // its certificate, for --webhook-ca-file

	mu     sync.Mutex
	status int
	body   string
	got    []http.Header
}

func newReceiver(t *testing.T, status int, body string) *receiver {
	t.Helper()
	r := &receiver{status: status, body: body}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.got = append(r.got, req.Header.Clone())
		status, body := r.status, r.body
		r.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(r.srv.Close)
	r.caFile = filepath.Join(t.TempDir(), "receiver.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	if err := os.WriteFile(r.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *receiver) set(status int, body string) {
	r.mu.Lock()
	r.status, r.body = status, body
	r.mu.Unlock()
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// siteArgs are the flags that let the site's webhook client reach this receiver.
func (r *receiver) siteArgs() []string {
	return []string{"--webhook-allow-private", "--webhook-ca-file", r.caFile}
}

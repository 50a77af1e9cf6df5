package prodlike

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/revops/revops/internal/platform/localca"
)

// The Revops processes of a stack: `revops api`, `serve` and `worker` started from the
// built binary with the stack's environment, and the certificate of the APIs' HTTPS.

// API is a running `revops api`.
type API struct {
	*Proc
	URL string // https://127.0.0.1:port
}

// StartAPI starts a `revops api` on a free loopback port with a certificate from the
// stack's CA, and waits until /readyz answers 200.
func (s *Stack) StartAPI(name string) *API {
	s.t.Helper()
	return s.startHTTPS(name, "api")
}

// StartServe starts a `revops serve` (the API and the worker in one process) as StartAPI
// starts an api.
func (s *Stack) StartServe(name string) *API {
	s.t.Helper()
	return s.startHTTPS(name, "serve")
}

func (s *Stack) startHTTPS(name, cmd string) *API {
	s.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url := "https://" + addr
	p := s.start(name, cmd,
		"REVOPS_HTTP_ADDR="+addr,
		"REVOPS_PUBLIC_URL="+url,
		"REVOPS_TLS_CERT="+filepath.Join(s.Dir, "api.crt"),
		"REVOPS_TLS_KEY="+filepath.Join(s.Dir, "api.key"))
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}
	defer hc.CloseIdleConnections()
	s.waitFor(p, func() bool {
		resp, err := hc.Get(url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return &API{Proc: p, URL: url}
}

// StartProcess starts `revops <cmd>` with the stack's environment and returns at once.
func (s *Stack) StartProcess(name, cmd string, env ...string) *Proc {
	return s.start(name, cmd, env...)
}

// StartWorker starts a `revops worker` and waits until it polls Temporal.
func (s *Stack) StartWorker(name string) *Proc {
	s.t.Helper()
	p := s.start(name, "worker")
	s.waitFor(p, func() bool { return p.logHas(`"msg":"worker started"`) })
	return p
}

// ClientTLS trusts the stack's CA, which signed the APIs' certificate.
func (s *Stack) ClientTLS() *tls.Config { return &tls.Config{RootCAs: s.ca.Pool()} }

func (s *Stack) start(name, cmd string, env ...string) *Proc {
	s.t.Helper()
	s.mu.Lock()
	s.n++
	logPath := filepath.Join(s.Dir, fmt.Sprintf("%02d-%s.log", s.n, name))
	s.mu.Unlock()
	p, err := startProc(name, logPath, append(append([]string{}, s.env...), env...), nil, s.Bins.Revops, cmd)
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	return p
}

// waitFor polls ready for up to a minute, failing the test if p exits first.
func (s *Stack) waitFor(p *Proc, ready func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ready() {
		if done, err := p.Exited(); done {
			s.t.Fatalf("%s exited: %v\n%s", p.Name, err, p.Tail(30))
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s not ready after a minute:\n%s", p.Name, p.Tail(30))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setupCA issues the APIs' certificate (127.0.0.1) from a CA of the stack's own.
func (s *Stack) setupCA() error {
	ca, err := localca.Ensure(filepath.Join(s.Dir, "ca"))
	if err != nil {
		return err
	}
	s.ca = ca
	cert, err := ca.Issue("127.0.0.1")
	if err != nil {
		return err
	}
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	keyDER, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "api.crt"), chain, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, "api.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

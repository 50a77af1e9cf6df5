package activities_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/models"
)

// Every kind of failure is a failed, retryable attempt that is recorded with its reason.
func TestDeliverFailuresAreRecordedAndRetried(t *testing.T) {
	tests := []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request, release <-chan struct{})
		url     func(t *testing.T, f *fixture) string // default: the receiver
		reason  string
		status  int
	}{
		{name: "status 500", reason: "status 500", status: 500, respond: func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, webhooktest.AckSentence)
		}},
		{name: "status 201", reason: "status 201", status: 201, respond: func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			w.WriteHeader(201)
			_, _ = io.WriteString(w, webhooktest.AckSentence)
		}},
		{name: "200 without the sentence", reason: "ack sentence missing", status: 200, respond: func(w http.ResponseWriter, _ *http.Request, _ <-chan struct{}) {
			_, _ = io.WriteString(w, "Revops API Event Recieved.") // misspelt
		}},
		{name: "redirect", reason: "redirect not followed (status 301)", status: 301, respond: func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
			if r.URL.Path == "/moved" {
				_, _ = io.WriteString(w, webhooktest.AckSentence)
				return
			}
			http.Redirect(w, r, "/moved", http.StatusMovedPermanently)
		}},
		{name: "slow headers", reason: "timeout after 300ms", respond: func(w http.ResponseWriter, _ *http.Request, release <-chan struct{}) {
			<-release // until the test ends: far past the deadline
			_, _ = io.WriteString(w, webhooktest.AckSentence)
		}},
		{name: "slow body", reason: "timeout after 300ms", status: 200, respond: func(w http.ResponseWriter, _ *http.Request, release <-chan struct{}) {
			_, _ = io.WriteString(w, "Revops API ")
			w.(http.Flusher).Flush()
			<-release
			_, _ = io.WriteString(w, "Event Received.")
		}},
		{name: "connection refused", reason: "connection refused", url: func(t *testing.T, _ *fixture) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			_ = ln.Close()
			return "https://" + addr + "/hook"
		}},
		{name: "untrusted certificate", reason: "tls: certificate signed by an unknown authority", url: func(t *testing.T, _ *fixture) string {
			return untrustedServer(t).URL
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) }) // before the receiver closes (cleanups run last-in first-out)
			if tt.respond != nil {
				f.rc.SetRespond(func(w http.ResponseWriter, r *http.Request) { tt.respond(w, r, release) })
			}
			target := f.rc.URL + "/hook"
			if tt.url != nil {
				target = tt.url(t, f)
			}
			f.endpoint(t, target, http.MethodPost, true)
			ev := f.db.Event(t, "deal-updated", map[string]any{"id": "d"}, time.Time{})

			start := time.Now()
			err := f.deliver(t, ev, 6)
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.NonRetryable() || appErr.Message() != tt.reason {
				t.Fatalf("err = %v, want a retryable %q", err, tt.reason)
			}
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("attempt took %v; the deadline is 300ms", elapsed)
			}
			if st := f.db.Load(t, ev.ID).Status; st != models.EventRetrying {
				t.Errorf("status %s, want retrying", st)
			}
			as := f.attempts(t, ev)
			if len(as) != 1 || as[0].Outcome != models.AttemptFailed || as[0].Error != tt.reason || as[0].StatusCode != tt.status {
				t.Fatalf("attempts %+v, want one failed with %q and status %d", as, tt.reason, tt.status)
			}
			if strings.HasPrefix(tt.reason, "timeout") && as[0].DurationMS < 300 {
				t.Errorf("timed-out attempt lasted %d ms, want ≥ 300", as[0].DurationMS)
			}
			if tt.name == "redirect" && len(f.rc.Received()) != 1 {
				t.Errorf("the redirect was followed (%d requests)", len(f.rc.Received()))
			}
		})
	}
}

func TestLastFailedAttemptMarksEventFailed(t *testing.T) {
	f := newFixture(t)
	f.rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
	f.endpoint(t, f.rc.URL, http.MethodPost, true)
	ev := f.db.Event(t, "deal-updated", map[string]any{"id": "d"}, time.Time{})
	// The test environment runs attempt 1; MaxAttempts 1 makes it the last one.
	if err := f.deliver(t, ev, 1); err == nil {
		t.Fatal("delivery to a 503 succeeded")
	}
	if st := f.db.Load(t, ev.ID).Status; st != models.EventFailed {
		t.Errorf("status %s, want failed", st)
	}
}

func TestNoEnabledEndpointSkips(t *testing.T) {
	for _, tc := range []struct {
		name      string
		configure bool
	}{{"disabled endpoint", true}, {"no endpoint", false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.configure {
				f.endpoint(t, f.rc.URL, http.MethodPost, false)
			}
			ev := f.db.Event(t, "deal-created", map[string]any{"id": "d"}, time.Time{})
			if err := f.deliver(t, ev, 6); err != nil {
				t.Fatalf("deliver: %v", err)
			}
			if n := len(f.rc.Received()); n != 0 {
				t.Fatalf("receiver got %d requests", n)
			}
			if st := f.db.Load(t, ev.ID).Status; st != models.EventSkipped {
				t.Errorf("status %s, want skipped", st)
			}
			as := f.attempts(t, ev)
			if len(as) != 1 || as[0].Outcome != models.AttemptSkipped {
				t.Errorf("attempts %+v, want one skipped", as)
			}
		})
	}
}

// untrustedServer answers correctly, but with a certificate of its own that no
// root the activities trust has signed.
func untrustedServer(t *testing.T) *httptest.Server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "untrusted"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, webhooktest.AckSentence)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

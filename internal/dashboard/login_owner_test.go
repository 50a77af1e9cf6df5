package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
)

// loginSite is the dashboard alone over st, every request from one address (httptest's
// 192.0.2.1): the owner, the attacker and the hammer share a NAT.
type loginSite struct {
	t      *testing.T
	d      *Dashboard
	routes *gin.Engine
}

func newLoginSite(t *testing.T, st *store.Store) *loginSite {
	gin.SetMode(gin.ReleaseMode)
	d := New(Deps{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	// The throttle's clock stands still: a slow run (race detector, loaded machine) must
	// not see its windows end halfway.
	now := time.Now()
	d.h.throttle.now = func() time.Time { return now }
	r := gin.New()
	d.Routes(r)
	return &loginSite{t: t, d: d, routes: r}
}

// login posts the login form with the given device token (none: "") and returns the
// answer and the device token it set, if any.
func (s *loginSite) login(email, password, device string) (*httptest.ResponseRecorder, string) {
	form := url.Values{"csrf_token": {"tok"}, "email": {email}, "password": {password}}
	req := httptest.NewRequest(http.MethodPost, "/dashboard/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: loginCookie, Value: "tok"})
	if device != "" {
		req.AddCookie(&http.Cookie{Name: deviceCookie, Value: device})
	}
	rec := httptest.NewRecorder()
	s.routes.ServeHTTP(rec, req)
	for _, ck := range rec.Result().Cookies() {
		if ck.Name == deviceCookie {
			return rec, ck.Value
		}
	}
	return rec, ""
}

func (s *loginSite) mustSignIn(what, email, password, device string) string {
	s.t.Helper()
	rec, set := s.login(email, password, device)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dashboard/api-keys" {
		s.t.Fatalf("%s: %d, want 303 to the dashboard: %.300s", what, rec.Code, rec.Body)
	}
	return set
}

// CONTRACT §17, issue 41 finding 7: the owner signs in while another client behind the
// same address has spent the address's budget (guessing the owner's password among
// others), and while another hammers the hash gate. The owner's browser, known from an
// earlier login, is a client of its own; a browser without that (or with another user's
// token) is its address, and is refused.
func TestOwnerSignsInBehindSharedAddress(t *testing.T) {
	for name, st := range map[string]*store.Store{
		"postgres": testdb.New(t), "sqlite": testdb.Open(t, filepath.Join(t.TempDir(), "revops.db")),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			_, ownerPW, err := orgs.Create(ctx, st, "Acme", "owner@acme.test")
			if err != nil {
				t.Fatal(err)
			}
			_, attackerPW, err := orgs.Create(ctx, st, "Mallory", "mallory@evil.test")
			if err != nil {
				t.Fatal(err)
			}
			s := newLoginSite(t, st)
			device := s.mustSignIn("the owner's first login", "owner@acme.test", ownerPW, "")
			if device == "" {
				t.Fatal("no device token set by a successful login")
			}
			// The attacker signs in to its own account (its browser is known for it
			// alone), then spends the address's budget guessing, the owner's email among
			// others, with and without its token.
			mallory := s.mustSignIn("the attacker's own login", "mallory@evil.test", attackerPW, "")
			for i := range perClient.max {
				email, tok := "owner@acme.test", mallory
				if i%2 == 1 {
					email, tok = fmt.Sprintf("guess%d@acme.test", i), ""
				}
				s.login(email, "wrong", tok)
			}
			for _, tok := range []string{"", mallory} {
				rec, _ := s.login("owner@acme.test", ownerPW, tok)
				if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "from your address") {
					t.Fatalf("the right password from a browser not known for the owner (token %q): %d, want 429 on the address: %.300s",
						tok, rec.Code, rec.Body)
				}
			}
			// The owner's browser signs in, again and again, its token renewed.
			for i := range 3 {
				if renewed := s.mustSignIn(fmt.Sprintf("the owner's browser, login %d", i+1), "owner@acme.test", ownerPW, device); renewed != device {
					t.Fatalf("the token was replaced (%q), want it renewed", renewed)
				}
			}

			// Another client hammers the hash gate: it holds the one slot, with logins
			// queued behind it. The owner's login queues too, and has the next slot.
			gate := newHashGate(1, time.Minute)
			s.d.h.hashes = gate
			hammer := gateSeat{share: "ip:198.51.100.0"}
			if !gate.enter(ctx, hammer) {
				t.Fatal("no slot")
			}
			for range 4 {
				go func() {
					if gate.enter(ctx, hammer) {
						gate.leave(hammer)
					}
				}()
			}
			neighbour := gateSeat{share: "ip:192.0.2.1"} // an unknown browser at the owner's address
			go func() {
				if gate.enter(ctx, neighbour) {
					gate.leave(neighbour)
				}
			}()
			waitFor(t, func() bool { return gate.waiting(hammer) == 4 && gate.waiting(neighbour) == 1 })
			done := make(chan *httptest.ResponseRecorder)
			go func() {
				rec, _ := s.login("owner@acme.test", ownerPW, device)
				done <- rec
			}()
			ownerSeat := gateSeat{share: "device:" + hashToken(device), trusted: true}
			waitFor(t, func() bool { return gate.waiting(ownerSeat) == 1 })
			gate.leave(hammer)
			if rec := <-done; rec.Code != http.StatusSeeOther {
				t.Fatalf("the owner's login behind the hammer: %d, want 303: %.300s", rec.Code, rec.Body)
			}
			waitFor(t, func() bool { return gate.waiting(hammer) == 0 && gate.waiting(neighbour) == 0 })
		})
	}
}

// The owner's browser has a budget of its own, and spends it like any client: five
// failures for its email, then it waits ("this browser").
func TestKnownBrowserBudgetIsItsOwn(t *testing.T) {
	st := testdb.New(t)
	_, pw, err := orgs.Create(context.Background(), st, "Acme", "owner@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	s := newLoginSite(t, st)
	device := s.mustSignIn("first login", "owner@acme.test", pw, "")
	for i := range perClientEmail.max {
		if rec, _ := s.login("owner@acme.test", "typo", device); rec.Code != http.StatusUnauthorized {
			t.Fatalf("typo %d: %d", i+1, rec.Code)
		}
	}
	rec, _ := s.login("owner@acme.test", pw, device)
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "for this email from this browser") {
		t.Fatalf("after five typos: %d, want 429 for this browser: %.300s", rec.Code, rec.Body)
	}
	// The address is another client: a fresh browser there still signs in.
	s.mustSignIn("a fresh browser at the same address", "owner@acme.test", pw, "")
}

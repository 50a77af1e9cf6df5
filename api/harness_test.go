package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"gorm.io/gorm"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/internal/testkit/testdb"
)

// harness is a real API over a fresh PostgreSQL database, with one organization and a
// key of each kind.
type harness struct {
	t     *testing.T
	srv   *httptest.Server
	store *store.Store
	keys  *keys.Manager
	orgID string
	dbURL string   // the database behind the API: a PostgreSQL URL or a SQLite file
	raw   *gorm.DB // a second connection to it, for tests that read tables directly
	// keys by "<type> <env>": "secret sandbox" → sk_sandbox_…
	key map[string]string
}

type harnessOption func(*config.Config, *api.Deps)

func newHarness(t *testing.T, opts ...harnessOption) *harness {
	t.Helper()
	return newHarnessOn(t, "postgres", opts...)
}

// newHarnessOn is newHarness on db: "postgres" (a fresh database) or "sqlite" (a fresh
// file), for rules that must hold on both (CONTRACT §15).
func newHarnessOn(t *testing.T, db string, opts ...harnessOption) *harness {
	t.Helper()
	return newHarnessWithin(t, db, store.DefaultOptions(), opts...)
}

// newHarnessWithin is newHarnessOn with a store within the bounds o (CONTRACT §21).
func newHarnessWithin(t *testing.T, db string, o store.Options, opts ...harnessOption) *harness {
	t.Helper()
	cfg := apitest.Config(t)
	url := filepath.Join(t.TempDir(), "revops.db")
	if db == "postgres" {
		url = testdb.URL(t)
	}
	st := testdb.OpenWith(t, url, o)
	// Options that give a dispatcher or a job starter set them on Replay too.
	deps := apitest.Deps(cfg, st)
	km := deps.Keys // the harness's own keys, whatever Keys an option gives the API
	for _, o := range opts {
		o(&cfg, &deps)
	}
	deps.Config = cfg // the endpoints are built from it, as options set it
	srv := apitest.Serve(t, deps)
	h := &harness{t: t, srv: srv, store: st, keys: km, dbURL: url, key: map[string]string{}}
	h.orgID = h.newOrg("Acme", "owner@acme.test")
	return h
}

// newOrg creates an organization with one key of each kind and returns its id; the keys of
// the harness's first organization are in h.key.
func (h *harness) newOrg(name, email string) string {
	h.t.Helper()
	ctx := context.Background()
	org, _, err := orgs.Create(ctx, h.store, name, email)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, env := range []string{"live", "sandbox"} {
		for _, typ := range []string{"public", "secret"} {
			k, err := h.keys.Create(ctx, org.ID, env, typ)
			if err != nil {
				h.t.Fatal(err)
			}
			if h.orgID == "" {
				h.key[typ+" "+env] = k.Plain
			}
		}
	}
	return org.ID
}

// response is a decoded reply.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not JSON (%d): %s", r.Status, r.Body)
	}
	return m
}

// errorCode returns error.code of an error envelope.
func (r response) errorCode(t *testing.T) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	if e == nil {
		t.Fatalf("no error envelope (%d): %s", r.Status, r.Body)
	}
	code, _ := e["code"].(string)
	return code
}

// do sends a request with the given key ("" for none). A non-nil body that is not
// []byte is encoded as JSON; []byte is sent as is. JSON content type unless set in hdr.
func (h *harness) do(method, path, key string, body any, hdr ...string) response {
	h.t.Helper()
	var raw []byte
	if body != nil {
		b, ok := body.([]byte)
		if !ok {
			var err error
			if b, err = json.Marshal(body); err != nil {
				h.t.Fatal(err)
			}
		}
		if raw = b; raw == nil {
			raw = []byte{} // a body was given, even an empty one
		}
	}
	r, err := h.send(method, path, key, raw, hdr...)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// send is do for goroutines: it reports instead of failing the test. A nil body sends
// none.
func (h *harness) send(method, path, key string, body []byte, hdr ...string) (response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		return response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return response{Status: res.StatusCode, Header: res.Header, Body: b}, err
}

// expectError checks status and error code.
func expectError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if got := r.errorCode(t); got != code {
		t.Fatalf("code %q, want %q: %s", got, code, r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
}

// expectMembers fails unless obj has exactly the members want.
func expectMembers(t *testing.T, obj map[string]any, want ...string) {
	t.Helper()
	if len(obj) != len(want) {
		t.Fatalf("keys %v, want %v", obj, want)
	}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			t.Fatalf("no %s in %v", k, obj)
		}
	}
}

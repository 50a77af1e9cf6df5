package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/revops/revops/api"
	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/cliapi"
	"github.com/revops/revops/internal/config"
	"github.com/revops/revops/internal/keys"
	"github.com/revops/revops/internal/orgs"
	"github.com/revops/revops/internal/replay"
	"github.com/revops/revops/internal/testdb"
)

// TestTrigger runs every trigger against a real API over a fresh database: each prints
// one line per call and leaves an event of its type.
func TestTrigger(t *testing.T) {
	st := testdb.New(t)
	cfg, err := config.Load(flag.NewFlagSet("test", flag.ContinueOnError), "serve", []string{"--rate-limit", "0", "--env-rate-limit", "0"})
	if err != nil {
		t.Fatal(err)
	}
	km := keys.NewManager(st)
	eps, err := app.NewEndpoints(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Config: cfg, Store: st, Keys: km, Endpoints: eps, Replay: &replay.Service{Store: st},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	org, _, err := orgs.Create(ctx, st, "Acme", "owner@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	key, err := km.Create(ctx, org.ID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cliapi.New(srv.URL, key.Plain, revops.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]string{
		"account-created": "POST   /v1/accounts",
		"account-updated": "PATCH  /v1/accounts/",
		"account-deleted": "DELETE /v1/accounts/",
		"deal-created":    "→ deal draft",
		"deal-updated":    "/submit",
		"deal-signed":     "/sign",
		"deal-active":     "→ deal active",
	} {
		var out bytes.Buffer
		if err := trigger(ctx, c, typ, &out); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s printed:\n%s\nwant a line with %q", typ, out.String(), want)
		}
		evs, err := c.ListEvents(ctx, &revops.ListEventsParams{Type: revops.EventType(typ), Limit: 1})
		if err != nil || len(evs.Data) == 0 {
			t.Errorf("%s: no event of the type (%v)", typ, err)
		}
	}

	// An API error reads as before, under main's "revops: ".
	bad, err := cliapi.New(srv.URL, "sk_test_nope", revops.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	err = cliapi.Err(trigger(ctx, bad, "account-created", io.Discard))
	if err == nil || !strings.HasPrefix(err.Error(), "401 ") {
		t.Errorf("bad key: %v", err)
	}
}

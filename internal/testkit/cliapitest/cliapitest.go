// Package cliapitest gives the CLI commands' tests a real API to call: the API server
// over a fresh PostgreSQL database, and the CLI's client with a secret sandbox key of a
// new organization.
package cliapitest

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/revops/revops/api"
	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/cli/cliapi"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/testkit/testdb"
)

// SandboxAPI starts the API (configured as `revops serve` with flags added, rate limits
// off) and returns the CLI's client of it, without retries so that an error shows at
// once, and its base URL. Everything stops at cleanup.
func SandboxAPI(t testing.TB, flags ...string) (*revops.Client, string) {
	t.Helper()
	st := testdb.New(t)
	cfg, err := config.Load(flag.NewFlagSet("test", flag.ContinueOnError), "serve",
		append([]string{"--rate-limit", "0", "--env-rate-limit", "0"}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	km := keys.NewManager(st)
	eps, err := app.NewEndpoints(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(app.NewHandler(api.Deps{Config: cfg, Store: st, Keys: km, Endpoints: eps, Replay: &replay.Service{Store: st},
		Meters: &meters.Service{Store: st, Log: log, MaxQueries: cfg.MeterQueries}, Log: log}))
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
	return c, srv.URL
}

// Package cliapitest gives the CLI commands' tests a real API to call: the API server
// over a fresh PostgreSQL database, and the CLI's client with a secret sandbox key of a
// new organization.
package cliapitest

import (
	"context"
	"testing"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/internal/testkit/testdb"
)

// SandboxAPI starts the API (configured as `revops serve` with flags added, rate limits
// off) and returns the CLI's client of it, without retries so that an error shows at
// once, and its base URL. Everything stops at cleanup.
func SandboxAPI(t testing.TB, flags ...string) (*revops.Client, string) {
	t.Helper()
	st := testdb.New(t)
	deps := apitest.Deps(apitest.Config(t, flags...), st)
	km := deps.Keys
	srv := apitest.Serve(t, deps)
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

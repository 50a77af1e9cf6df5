// Package apitest builds the API for tests the way internal/app's Run builds it, every
// part given explicitly, so that no test relies on a default filled in by api.New and a
// change to the wiring is made here once. The API's own tests (package api_test), the
// dashboard's, the CLI's and the end-to-end and benchmark rigs serve it through here.
package apitest

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/buildinfo"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
)

// Config is `revops serve`'s configuration with flags added and the rate limits off, so
// that a test's requests are refused only where it asks for a limit.
func Config(t testing.TB, flags ...string) config.Config {
	t.Helper()
	cfg, err := config.Load(flag.NewFlagSet("test", flag.ContinueOnError), "serve",
		append([]string{"--rate-limit", "0", "--env-rate-limit", "0"}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Deps are the API's parts over st as Run wires them, without Temporal: keys and the
// meters' values queries over st, and a log that discards. No dispatcher after
// commit: new events and replays wait for the sweeper unless the test sets one (Queue).
// Endpoints are left to Serve, which builds them from the final configuration.
func Deps(cfg config.Config, st *store.Store) api.Deps {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return api.Deps{
		Config: cfg,
		Store:  st,
		Keys:   keys.NewManager(st),
		Log:    log,
		Meters: &meters.Queries{Store: st, MaxQueries: cfg.MeterQueries},
	}
}

// Queue wires Run's start queue in front of next as the store's after commit (as
// internal/app does): the new events and replays of every change reach it without the
// request waiting (CONTRACT §10), and an overflow is read back from the store. Jobs are
// left to their sweeper.
func Queue(d *api.Deps, next dispatch.Dispatcher) *dispatch.Queue {
	st, ok := d.Store.(*store.Store)
	if !ok || st == nil {
		panic("apitest.Queue: Deps.Store is not the *store.Store apitest.Deps gives")
	}
	return AfterCommit(st, next, d.Log)
}

// AfterCommit wires a start queue in front of next as st's after commit, reading an
// overflow back from st, and returns it.
func AfterCommit(st *store.Store, next dispatch.Dispatcher, log *slog.Logger) *dispatch.Queue {
	q := dispatch.NewQueue(next, log, st)
	st.SetAfterCommit(dispatch.AfterCommit{Events: q})
	return q
}

// Serve serves the API built from d until t ends. Endpoints, when d has none, are the
// process's one Sender and endpoints service built from d.Config (app.NewEndpoints), as
// Run builds them.
func Serve(t testing.TB, d api.Deps) *httptest.Server {
	t.Helper()
	// Deps built here hold the store itself: the dashboard and the endpoints need it
	// whole, the API only the parts its domain packages declare (api.Storage).
	st, ok := d.Store.(*store.Store)
	if !ok {
		t.Fatalf("apitest.Serve: Deps.Store is %T, want the *store.Store apitest.Deps gives", d.Store)
	}
	if d.Endpoints == nil {
		eps, err := app.NewEndpoints(d.Config, st)
		if err != nil {
			t.Fatal(err)
		}
		// The workers of a test deployment run this release: ordering "object" passes
		// the rolling-upgrade gate (CONTRACT §26), which tests of the gate itself replace.
		eps.LaneWorkers = CurrentWorkers
		d.Endpoints = eps
	}
	srv := httptest.NewServer(app.NewHandler(st, d))
	t.Cleanup(srv.Close)
	return srv
}

// Workers are the Temporal identities of a test deployment's workers, as the gate on
// ordering "object" lists them (webhook.WorkerIdentities).
type Workers []string

// WorkerIdentities returns w.
func (w Workers) WorkerIdentities(context.Context) ([]string, error) { return w, nil }

// CurrentWorkers is one worker of this release, which honours order lanes.
var CurrentWorkers = Workers{webhook.WorkerIdentity("1@apitest", buildinfo.Read().Version)}

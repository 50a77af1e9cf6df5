package main

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/app"
)

func runServe(ctx context.Context, args []string) error  { return runProduction(ctx, "serve", args) }
func runAPI(ctx context.Context, args []string) error    { return runProduction(ctx, "api", args) }
func runWorker(ctx context.Context, args []string) error { return runProduction(ctx, "worker", args) }

// runProduction runs the API ("api"), the worker ("worker") or both ("serve").
func runProduction(ctx context.Context, mode string, args []string) error {
	cfg, err := loadConfig(newFlagSet(mode), mode, args)
	if err != nil {
		return err
	}
	withAPI, withWorker := mode != "worker", mode != "api"
	if withAPI {
		if err := cfg.CheckServeTLS(); err != nil {
			return err
		}
	}
	log := app.NewLogger(cfg).With("component", mode)
	app.LogStart(log, mode)
	_, flush, err := app.StartTracing(ctx, log, "revops-"+mode)
	if err != nil {
		return err
	}
	defer flush()
	st, err := app.OpenStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	// A lazy client lets the process start, and the API accept changes, while Temporal
	// is down: events wait in the outbox, and the worker connects once Temporal is back.
	tc, err := client.NewLazyClient(app.TemporalOptions(cfg, log))
	if err != nil {
		return fmt.Errorf("temporal client: %w", err)
	}
	defer tc.Close()
	return app.Run(ctx, cfg, log, st, tc, app.Parts{API: withAPI, Worker: withWorker})
}

package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/temporalsetup"
)

// setupTimeout bounds temporal-setup: a namespace just registered takes up to one
// namespace refresh to be served, search attributes as long again.
const setupTimeout = 2 * time.Minute

// runTemporalSetup prepares the Temporal namespace (CONTRACT §16); running it again
// changes nothing.
func runTemporalSetup(ctx context.Context, args []string) error {
	cfg, err := loadConfig(newFlagSet("temporal-setup"), "temporal-setup", args)
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg).With("component", "temporal-setup")
	app.LogStart(log, "temporal-setup")
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	tc, err := dialUntilUp(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	res, err := temporalsetup.Run(ctx, tc, app.TemporalSetup(cfg, log, app.ServerNamespaceRefresh))
	for _, c := range res.Changes {
		fmt.Fprintln(stdout, c)
	}
	if err != nil {
		return fmt.Errorf("temporal setup of namespace %s at %s: %w", cfg.TemporalNamespace, cfg.TemporalAddress, err)
	}
	if len(res.Changes) == 0 {
		fmt.Fprintf(stdout, "namespace %s is set up (nothing to change)\n", cfg.TemporalNamespace)
	}
	return nil
}

// dialUntilUp dials Temporal until it answers or ctx ends: setup usually runs right after
// the server was started (compose, scripts), before its frontend serves.
func dialUntilUp(ctx context.Context, cfg config.Config, log *slog.Logger) (client.Client, error) {
	for warned := false; ; warned = true {
		tc, err := app.DialTemporal(ctx, cfg, log)
		if err == nil {
			return tc, nil
		}
		if !warned {
			log.Warn("Temporal does not answer yet; retrying", "temporal_address", cfg.TemporalAddress, "err", err)
		}
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

package main

import (
	"context"
	"fmt"

	"github.com/revops/revops/internal/app"
)

// runDev starts the whole product on one machine (app.Dev): an embedded Temporal server
// and UI, SQLite, the API and the worker, with a demo organization and its keys.
func runDev(ctx context.Context, args []string) error {
	cfg, err := loadConfig(newFlagSet("dev"), "dev", args)
	if err != nil {
		return err
	}
	if cfg.TLSCert == "" && !isLoopback(cfg.HTTPAddr) {
		return fmt.Errorf("dev serves plain HTTP only on loopback; %s is not (use 127.0.0.1:PORT, or give --tls-cert/--tls-key)", cfg.HTTPAddr)
	}
	log := app.NewLogger(cfg).With("component", "dev")
	app.LogStart(log, "dev")
	return app.Dev(ctx, cfg, log)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/platform/buildinfo"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/store"
)

// loadConfig parses a command's flags (fs may hold command-specific ones).
func loadConfig(fs *flag.FlagSet, mode string, args []string) (config.Config, error) {
	return config.Load(fs, mode, args)
}

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("revops "+name, flag.ContinueOnError)
}

// newLogger logs text in dev and JSON in production.
func newLogger(cfg config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel)) // validated by config
	opts := &slog.HandlerOptions{Level: level}
	if cfg.Mode == "dev" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

// logStart is the first line every long-running command logs: what it is and the build.
func logStart(log *slog.Logger, command string) {
	log.Info("revops starting", append([]any{"command", command}, buildinfo.Read().LogAttrs()...)...)
}

// openStore opens the database of a serving process (api, worker, serve), which does not
// migrate (CONTRACT §16: `revops migrate` is its own step, run once per release): it
// refuses a schema that is behind or ahead of this binary.
func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.Store, error) {
	st, err := store.OpenWith(ctx, cfg.DatabaseURL, storeOptions(cfg), log)
	if err != nil {
		return nil, err
	}
	if err := st.CheckSchema(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	metrics.RegisterOutbox(st.OutboxBacklogAge)
	return st, nil
}

// openMigratedStore opens the database and applies pending migrations first (revops dev,
// where one process is the whole deployment).
func openMigratedStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.Store, error) {
	st, err := store.OpenWith(ctx, cfg.DatabaseURL, storeOptions(cfg), log)
	if err != nil {
		return nil, err
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if len(applied) > 0 {
		log.Info("migrations applied", "migrations", strings.Join(applied, ","))
	}
	metrics.RegisterOutbox(st.OutboxBacklogAge)
	return st, nil
}

// storeOptions are the database bounds of the configuration (REVOPS_DB_*, CONTRACT §21);
// jobs keep the store's own timeouts.
func storeOptions(cfg config.Config) store.Options {
	o := store.DefaultOptions()
	o.Connections, o.JobConnections = cfg.DBConnections, cfg.DBJobConnections
	o.LockTimeout, o.StatementTimeout = cfg.DBLockTimeout, cfg.DBStatementTimeout
	return o
}

// dialTemporal connects to the Temporal frontend; the SDK logs at warn and above only.
func dialTemporal(ctx context.Context, cfg config.Config, log *slog.Logger) (client.Client, error) {
	c, err := client.DialContext(ctx, app.TemporalOptions(cfg, log))
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", cfg.TemporalAddress, err)
	}
	return c, nil
}

// isLoopback tells whether a listen address only accepts local connections.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Package devstack runs a complete Temporal development stack inside the
// current process for `revops dev`: the Temporal server (frontend, history,
// matching and worker services) persisted to one SQLite file, and optionally
// the Temporal Web UI.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/server/temporal"
)

// Options configure Start.
type Options struct {
	DataDir          string       // directory for the Temporal SQLite file (created if missing): DataDir/temporal.db
	FrontendAddr     string       // host:port of the Temporal gRPC frontend, e.g. 127.0.0.1:7233 ("" = that; port 0 = pick a free one)
	UIAddr           string       // host:port of the Temporal Web UI, e.g. 127.0.0.1:8233 ("" = no UI, port 0 = pick a free one)
	Namespace        string       // namespace to create if missing ("" = "default")
	SearchAttributes []string     // Keyword search attributes to register on the namespace
	Logger           *slog.Logger // receives Temporal's warnings and errors (nil = slog.Default())
	Verbose          bool         // also pass Temporal's debug and info logs through
}

// startTimeout bounds how long Start waits for the services to become ready
// when the caller's context has no deadline.
const startTimeout = 2 * time.Minute

// Stack is a running development stack. Stop it when done.
type Stack struct {
	server   temporal.Server
	ui       *webUI
	frontend string
	level    *slog.LevelVar // level of the server's logger
	verbose  bool

	stopOnce sync.Once
	stopErr  error
}

// withDefaults fills what o leaves out, and refuses what it may not.
func (o *Options) withDefaults() error {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FrontendAddr == "" {
		o.FrontendAddr = "127.0.0.1:7233"
	}
	if o.DataDir == "" {
		return errors.New("devstack: DataDir is required")
	}
	if err := validateSearchAttributes(o.SearchAttributes); err != nil {
		return fmt.Errorf("devstack: %w", err)
	}
	return nil
}

// Start starts Temporal (and the UI if opts.UIAddr is set) and returns once
// the frontend accepts connections, the namespace exists, the search
// attributes are registered and the UI is serving. ctx bounds startup only;
// the stack keeps running until Stop.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	began := time.Now()
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create temporal data dir: %w", err)
	}

	// Hold every port we intend to use until just before its server binds
	// it, so that a busy port fails here, with a clear error, and nothing
	// else grabs a picked port in the meantime.
	var serverPorts, uiPort portHolder
	defer serverPorts.release()
	defer uiPort.release()
	sp, err := pickServicePorts(&serverPorts, opts.FrontendAddr)
	if err != nil {
		return nil, err
	}
	var uiEndpoint endpoint
	if opts.UIAddr != "" {
		if uiEndpoint, err = uiPort.claim("temporal ui", opts.UIAddr); err != nil {
			return nil, err
		}
	}

	sql := sqlConfig(filepath.Join(opts.DataDir, "temporal.db"))
	if err := prepareDatabase(sql, opts.Namespace, opts.SearchAttributes); err != nil {
		return nil, err
	}

	quiet, level := quietLogger(opts.Logger, opts.Verbose)
	// NewServer already binds the gRPC listeners (fx constructors run here),
	// so the probed ports must be free again before it is called.
	serverPorts.release()
	srv, err := temporal.NewServer(
		temporal.WithConfig(serverConfig(sql, sp)),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(staticHosts(sp)),
		temporal.WithLogger(serverLogger{l: quiet}),
		temporal.WithDynamicConfigClient(dynamicConfig()),
	)
	if err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		_ = srv.Stop()
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	s := &Stack{server: srv, frontend: sp.frontend.dialAddr(), level: level, verbose: opts.Verbose}

	if err := s.waitReady(ctx, opts, quiet); err != nil {
		_ = s.Stop()
		return nil, err
	}
	if opts.UIAddr != "" {
		uiPort.release()
		if s.ui, err = startUI(ctx, uiEndpoint, s.frontend, opts.Namespace, quiet); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	opts.Logger.Info("temporal dev server ready",
		"frontend", s.frontend, "ui", s.UIURL(), "namespace", opts.Namespace,
		"db", sql.DatabaseName, "took", time.Since(began).Round(time.Millisecond))
	return s, nil
}

// waitReady blocks until the frontend serves the namespace and every search
// attribute is registered.
func (s *Stack) waitReady(ctx context.Context, opts Options, logger *slog.Logger) error {
	c, err := dialWhenReady(ctx, s.frontend, opts.Namespace, logger)
	if err != nil {
		return err
	}
	defer c.Close()
	return ensureSearchAttributes(ctx, c, opts.Namespace, opts.SearchAttributes)
}

// FrontendAddr is the host:port SDK clients dial.
func (s *Stack) FrontendAddr() string { return s.frontend }

// UIURL is the Web UI base URL, e.g. "http://127.0.0.1:8233", or "" without UI.
func (s *Stack) UIURL() string {
	if s.ui == nil {
		return ""
	}
	return s.ui.url
}

// Stop shuts down the UI, then the server. It is safe to call more than once.
func (s *Stack) Stop() error {
	s.stopOnce.Do(func() {
		// While services stop one by one, the survivors log connection
		// errors ("shard closed", "connection refused") about the ones
		// already gone; that is expected, not news. Real failures come back
		// as the returned error.
		if !s.verbose {
			s.level.Set(slog.LevelError + 4)
		}
		if s.ui != nil {
			s.ui.stop()
		}
		if err := s.server.Stop(); err != nil {
			s.stopErr = fmt.Errorf("stop temporal server: %w", err)
		}
	})
	return s.stopErr
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/config"
	"github.com/revops/revops/internal/keys"
	"github.com/revops/revops/internal/metrics"
	"github.com/revops/revops/internal/store"
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
	log := newLogger(cfg).With("component", mode)
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	// A lazy client lets the API start, and accept changes, while Temporal is down:
	// events wait in the outbox for the sweeper.
	tc, err := client.NewLazyClient(temporalOptions(cfg, log))
	if err != nil {
		return fmt.Errorf("temporal client: %w", err)
	}
	defer tc.Close()
	return runParts(ctx, cfg, log, st, tc, withAPI, withWorker, nil)
}

// runParts runs the API and/or the worker until ctx ends. ready is closed once they listen.
func runParts(ctx context.Context, cfg config.Config, log *slog.Logger, st *store.Store, tc client.Client, withAPI, withWorker bool, ready chan<- string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	report := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			cancel()
		}
	}
	if cfg.MetricsAddr != "" {
		addr, merr, err := metrics.Serve(ctx, cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener on %s: %w", cfg.MetricsAddr, err)
		}
		log.Info("metrics listening", "addr", addr.String())
		wg.Add(1)
		go func() {
			defer wg.Done()
			report(<-merr)
		}()
	}
	if withWorker {
		stopWorker, err := startWorker(ctx, cfg, log, st, tc)
		if err != nil {
			return err
		}
		defer stopWorker()
	}
	if withAPI {
		ln, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
		}
		starter := newStarter(cfg, log, st, tc)
		handler := api.New(api.Deps{
			Config:   cfg,
			Store:    st,
			Keys:     keys.NewManager(st),
			Log:      log,
			Dispatch: starter,
			Replay:   starter,
			Ready: []api.Check{
				{Name: "database", Check: st.Ping},
				{Name: "temporal", Check: func(ctx context.Context) error {
					_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
					return err
				}},
			},
		})
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			report(serveHTTP(ctx, srv, ln, cfg.TLSCert, cfg.TLSKey))
		}()
		log.Info("API listening", "addr", ln.Addr().String())
		if ready != nil {
			ready <- ln.Addr().String()
		}
	}
	<-ctx.Done()
	wg.Wait()
	return errors.Join(errs...)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/cli/demo"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/platform/localca"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/internal/platform/tracing"
)

// runDev starts the whole product on one machine: an embedded Temporal server and UI,
// SQLite, the API and the worker, with a demo organization and its keys.
func runDev(ctx context.Context, args []string) error {
	cfg, err := loadConfig(newFlagSet("dev"), "dev", args)
	if err != nil {
		return err
	}
	if cfg.TLSCert == "" && !isLoopback(cfg.HTTPAddr) {
		return fmt.Errorf("dev serves plain HTTP only on loopback; %s is not (use 127.0.0.1:PORT, or give --tls-cert/--tls-key)", cfg.HTTPAddr)
	}
	log := newLogger(cfg).With("component", "dev")
	logStart(log, "dev")
	devGC()
	tr, flush, err := startTracing(ctx, log, "revops-dev")
	if err != nil {
		return err
	}
	defer flush()
	switch {
	case !cfg.TemporalTraces:
		withholdOTELFromTemporal()
	case tr == nil:
		return errors.New("--temporal-traces: tracing is off (no OTEL_TRACES_EXPORTER=otlp or OTLP endpoint set)")
	case tr.Protocol != tracing.ProtocolGRPC:
		return errors.New("--temporal-traces: the embedded Temporal server exports traces over OTLP/grpc only (set OTEL_EXPORTER_OTLP_PROTOCOL=grpc)")
	default:
		// The server exports only when OTEL_TRACES_EXPORTER says otlp, and reads the
		// traces protocol variable only: say both as Revops understood them.
		_ = os.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		_ = os.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", tracing.ProtocolGRPC)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}

	// Webhooks to `revops listen` use certificates of the local CA: trust it.
	if _, err := localca.Ensure(cfg.DataDir); err != nil {
		return err
	}
	if cfg.WebhookCAFile == "" {
		cfg.WebhookCAFile = localca.CertPath(cfg.DataDir)
	}

	// The search attributes are registered, with their types, by the same setup as
	// `revops temporal-setup`, below.
	stack, err := devstack.Start(ctx, devstack.Options{
		DataDir:      cfg.DataDir,
		FrontendAddr: cfg.TemporalAddress,
		UIAddr:       cfg.TemporalUIAddr,
		Namespace:    cfg.TemporalNamespace,
		Logger:       log,
		Verbose:      cfg.TemporalVerbose,
	})
	if err != nil {
		return fmt.Errorf("start embedded Temporal: %w", err)
	}
	if tr != nil {
		logExportErrors(log)
	}
	defer func() {
		if err := stack.Stop(); err != nil {
			log.Warn("stop embedded Temporal", "err", err)
		}
	}()

	// Dev keeps its own key (CONTRACT §25), made at the first start.
	if err := withDataDirKey(&cfg, true); err != nil {
		return err
	}
	st, err := openMigratedStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := demo.Ensure(ctx, st, keys.NewManager(st), cfg.DataDir)
	if err != nil {
		return fmt.Errorf("prepare demo organization: %w", err)
	}
	tc, err := dialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	if _, err := temporalsetup.Run(ctx, tc, app.TemporalSetup(cfg, log, devstack.SearchAttributeSettle)); err != nil {
		return fmt.Errorf("set up the embedded Temporal: %w", err)
	}

	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- app.Run(ctx, cfg, log, st, tc, app.Parts{API: true, Worker: true, Ready: ready}) }()
	select {
	case addr := <-ready:
		printBanner(addr, stack.UIURL(), stack.FrontendAddr(), cfg.TemporalNamespace, cfg.DataDir, tracesLine(tr, cfg.TemporalTraces), d)
	case err := <-errc:
		return err
	}
	err = <-errc
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	fmt.Println("Revops dev stopped.")
	return err
}

// tracesLine says where traces go, for the banner ("" when tracing is off).
func tracesLine(tr *tracing.Tracing, temporalToo bool) string {
	if tr == nil {
		return ""
	}
	if temporalToo {
		return tr.Describe() + " (the embedded Temporal server's too)"
	}
	return tr.Describe()
}

func printBanner(apiAddr, uiURL, temporalAddr, namespace, dataDir, traces string, d demo.Result) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nRevops dev is running (Ctrl-C stops it).\n")
	fmt.Fprintf(&b, "  API:          http://%s\n", apiAddr)
	fmt.Fprintf(&b, "  Dashboard:    http://%s/dashboard\n", apiAddr)
	fmt.Fprintf(&b, "  Temporal UI:  %s\n", uiURL)
	fmt.Fprintf(&b, "  Temporal:     %s (namespace %s)\n", temporalAddr, namespace)
	if traces != "" {
		fmt.Fprintf(&b, "  Traces:       %s\n", traces)
	}
	fmt.Fprintf(&b, "  Data:         %s\n\n", dataDir)
	var sandboxSecret string
	for _, k := range d.Keys {
		fmt.Fprintln(&b, k.Line())
		if k.Type == "secret" && k.Env == "sandbox" {
			sandboxSecret = k.Plain
		}
	}
	if d.Password != "" {
		fmt.Fprintf(&b, "dashboard login: %s password: %s\n", demo.Email, d.Password)
	} else {
		fmt.Fprintf(&b, "dashboard login: %s (password shown at first start; new one: revops orgs reset-password --email %s)\n", demo.Email, demo.Email)
	}
	fmt.Fprintf(&b, "\nTry: curl -H \"Authorization: Bearer %s\" http://%s/v1/whoami\n", sandboxSecret, apiAddr)
	fmt.Print(b.String())
}

// devGC trades memory for CPU in the one process that holds Revops and its embedded
// Temporal (CONTRACT §22): the collector runs at 400 % heap growth instead of 100 %
// (0.87x the CPU per delivery at 32 clients, docs/benchmarks.md "Delivery cost"), with a
// soft limit of 1 GiB so that the heap never grows past what a laptop gives a dev tool.
// GOGC or GOMEMLIMIT in the environment win. They are the Go runtime's own variables, read
// by the runtime before main, not Revops settings: internal/platform/config does not own
// them, and devGC only asks whether they are set so as not to override the runtime's reading.
func devGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/cli/demo"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/platform/localca"
	"github.com/revops/revops/internal/platform/temporalsetup"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
)

// Dev runs the whole product on one machine (`revops dev`): an embedded Temporal server
// and UI, SQLite, the API and the worker, with a demo organization and its keys, until
// ctx ends. cfg is dev's configuration as its flags gave it, log its logger.
func Dev(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	devGC()
	tr, flush, err := devTracing(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer flush()
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

	st, d, err := devStore(ctx, &cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	tc, err := DialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	if _, err := temporalsetup.Run(ctx, tc, TemporalSetup(cfg, log, devstack.SearchAttributeSettle)); err != nil {
		return fmt.Errorf("set up the embedded Temporal: %w", err)
	}
	return runDev(ctx, cfg, log, st, tc, func(addr string) {
		printBanner(addr, stack.UIURL(), stack.FrontendAddr(), cfg.TemporalNamespace, cfg.DataDir, tracesLine(tr, cfg.TemporalTraces), d)
	})
}

// devTracing starts Revops's tracing, and says whether the embedded Temporal server
// traces too (--temporal-traces): it needs the OTLP/grpc exporter Revops uses.
func devTracing(ctx context.Context, cfg config.Config, log *slog.Logger) (*tracing.Tracing, func(), error) {
	tr, flush, err := StartTracing(ctx, log, "revops-dev")
	if err != nil {
		return nil, nil, err
	}
	switch {
	case !cfg.TemporalTraces:
		withholdOTELFromTemporal()
	case tr == nil:
		flush()
		return nil, nil, errors.New("--temporal-traces: tracing is off (no OTEL_TRACES_EXPORTER=otlp or OTLP endpoint set)")
	case tr.Protocol != tracing.ProtocolGRPC:
		flush()
		return nil, nil, errors.New("--temporal-traces: the embedded Temporal server exports traces over OTLP/grpc only (set OTEL_EXPORTER_OTLP_PROTOCOL=grpc)")
	default:
		// The server exports only when OTEL_TRACES_EXPORTER says otlp, and reads the
		// traces protocol variable only: say both as Revops understood them.
		_ = os.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		_ = os.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", tracing.ProtocolGRPC)
	}
	return tr, flush, nil
}

// devStore opens dev's database, migrated, and its demo organization. Dev keeps its own
// encryption key (CONTRACT §25), made at the first start.
func devStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (*store.Store, demo.Result, error) {
	if err := WithDataDirKey(cfg, true); err != nil {
		return nil, demo.Result{}, err
	}
	st, err := OpenMigratedStore(ctx, *cfg, log)
	if err != nil {
		return nil, demo.Result{}, err
	}
	d, err := demo.Ensure(ctx, st, keys.NewManager(st), cfg.DataDir)
	if err != nil {
		_ = st.Close()
		return nil, demo.Result{}, fmt.Errorf("prepare demo organization: %w", err)
	}
	return st, d, nil
}

// runDev runs the API and the worker, announcing the API's address once it listens.
func runDev(ctx context.Context, cfg config.Config, log *slog.Logger, st *store.Store, tc client.Client, listening func(addr string)) error {
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, cfg, log, st, tc, Parts{API: true, Worker: true, Ready: ready}) }()
	select {
	case addr := <-ready:
		listening(addr)
	case err := <-errc:
		return err
	}
	err := <-errc
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

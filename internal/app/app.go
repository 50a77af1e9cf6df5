// Package app wires the long-running parts of Revops — the API, the workers and their
// sweepers, the meters' consumer, the metrics listener and the Temporal reachability monitor —
// for the commands that run them (serve, api, worker, dev) and for the end-to-end tests
// that start them exactly as those commands do. It is the wiring layer: it sits above api,
// workflows and activities, and cmd/revops only parses flags and calls it.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/metrics"
	"github.com/revops/revops/internal/platform/reachability"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/workflows"
	"github.com/revops/revops/workflows/wire"
)

// Defaults of Parts' intervals.
const (
	DefaultSweepEvery  = 5 * time.Second  // how often the worker looks for events without a workflow
	DefaultWorkerRetry = 30 * time.Second // longest wait between attempts to start the worker
	// dispatchGrace is how long shutdown lets queued workflow starts finish.
	dispatchGrace = 5 * time.Second
)

// Parts says what a process runs and how often it polls.
type Parts struct {
	API    bool
	Worker bool // the workers, the outbox and job sweepers, and the meters' consumer
	// Ready receives the API's address once it listens (nil: nobody waits).
	Ready chan<- string
	// Intervals, shortened by tests; zero means the default.
	SweepEvery  time.Duration // DefaultSweepEvery
	ProbeEvery  time.Duration // reachability.DefaultEvery
	WorkerRetry time.Duration // DefaultWorkerRetry
	// ClaimEvery is the claimer's poll (PostgreSQL); zero means every second, or every
	// SweepEvery when that is shorter. The poll is the safety net of the start after
	// commit: a test sets it to an hour to show that nothing else starts events.
	ClaimEvery time.Duration
	// PurgeRows bounds a page of a deleted meter's purge; zero means meters.PurgeRows.
	// Tests make it small, so that a purge takes many pages.
	PurgeRows int
	// DeletionRows bounds a page of a deleted endpoint's job; zero means
	// webhook.DeletionRows. Tests make it small, so that a deletion takes many pages.
	DeletionRows int
}

// TemporalOptions are the client options of every command; the SDK logs at warn and
// above only.
func TemporalOptions(cfg config.Config, log *slog.Logger) client.Options {
	opts := client.Options{
		HostPort:       cfg.TemporalAddress,
		Namespace:      cfg.TemporalNamespace,
		Logger:         sdklog.NewStructuredLogger(slog.New(warnOnly{log.Handler()})),
		MetricsHandler: metrics.TemporalHandler(),
	}
	if cfg.TemporalCompression == "none" {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	if tracing.On() {
		// Workflow starts, runs and activity attempts join the trace that made the change
		// (CONTRACT §19); workers built from this client trace too.
		opts.Interceptors = append(opts.Interceptors, tracing.TemporalInterceptor())
	}
	return opts
}

// warnOnly drops SDK chatter below warn.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

// Run runs the parts until ctx ends, whether or not Temporal answers: tc may be a lazy
// client (client.NewLazyClient) of a Temporal that is away; the API then serves, events
// wait in the outbox, and the worker connects once Temporal is back.
func Run(ctx context.Context, cfg config.Config, log *slog.Logger, st *store.Store, tc client.Client, p Parts) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &group{cancel: cancel}
	// Every exit waits for what was started, so nothing outlives the store and client
	// that the caller closes after Run.
	defer g.wg.Wait()
	defer cancel()

	// Built before anything starts, so that a webhook CA file that cannot be loaded stops
	// the process here, whichever parts it runs.
	endpoints, err := NewEndpoints(cfg, st)
	if err != nil {
		return err
	}
	endpoints.LaneWorkers = dispatch.Pollers{Client: tc} // the gate on ordering "object" (CONTRACT §26)
	wireFanOut(st)
	if err := g.serveMetrics(ctx, cfg, log); err != nil {
		return err
	}
	mon := temporalMonitor(cfg, log, tc, p.ProbeEvery)
	g.run(func() { mon.Run(ctx) })
	s := newStarters(cfg, log, st, tc, mon)

	// Who starts runs (CONTRACT §22). On PostgreSQL, processes that run the worker claim
	// committed events from the outbox and start them eagerly; a process that commits
	// changes wakes its own claimer, or, without one, the others' by notification, and
	// reaches the workflows of its replays itself. On SQLite (`revops dev`, one process)
	// the process starts its runs itself through the queue.
	var claimer *dispatch.Claimer
	if p.Worker && st.ClaimsStarts() {
		// It polls every second, or as often as tests sweep.
		poll := cmp.Or(p.ClaimEvery, min(cmp.Or(p.SweepEvery, time.Second), time.Second))
		claimer = &dispatch.Claimer{Starter: s.starter, Store: st, Poll: poll}
	}
	// After commit, one dispatcher for every transaction of this process, whoever opens
	// it (a request, an activity, the meters' consumer): its events and jobs start as
	// soon as it commits (issue 42); the claimer's poll and the sweepers are the safety
	// net. Wired before anything commits.
	queue := afterCommit(ctx, st, s.starter, s.jobs, claimer, newPacer(cfg, tc, log, g.run), log, g.run)
	defer closeQueue(queue)
	if p.Worker {
		g.runWorker(ctx, cfg, log, st, tc, p, endpoints, s, claimer)
	}
	if p.API {
		if err := g.runAPI(ctx, cfg, log, st, p, endpoints, mon); err != nil {
			return err
		}
	}
	<-ctx.Done()
	g.wg.Wait()
	return errors.Join(g.errs...)
}

// group runs the parts of a process: the first that fails ends them all.
type group struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	cancel context.CancelFunc
}

// report keeps a part's error and ends the others.
func (g *group) report(err error) {
	if err != nil {
		g.mu.Lock()
		g.errs = append(g.errs, err)
		g.mu.Unlock()
		g.cancel()
	}
}

// run runs f in its own goroutine, waited for by Run.
func (g *group) run(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

// serveMetrics starts the metrics listener, when there is one.
func (g *group) serveMetrics(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	if cfg.MetricsAddr == "" {
		return nil
	}
	addr, merr, err := metrics.Serve(ctx, cfg.MetricsAddr, cfg.Pprof)
	if err != nil {
		return fmt.Errorf("metrics listener on %s: %w", cfg.MetricsAddr, err)
	}
	log.Info("metrics listening", "addr", addr.String())
	g.run(func() { g.report(<-merr) })
	return nil
}

// temporalMonitor probes whether Temporal answers (its reachability, not an endpoint's
// health), for the readiness check and the starters.
func temporalMonitor(cfg config.Config, log *slog.Logger, tc client.Client, every time.Duration) *reachability.Monitor {
	return &reachability.Monitor{
		Name: "Temporal",
		Probe: func(ctx context.Context) error {
			_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
		Every: every,
		Log:   log.With("temporal_address", cfg.TemporalAddress),
		// The gauge is per process: each replica says what it sees.
		OnChange: metrics.TemporalReachable,
	}
}

// starters are the process's starters of runs: of events' deliveries and of jobs.
type starters struct {
	starter *dispatch.Starter
	jobs    *dispatch.Jobs
}

func newStarters(cfg config.Config, log *slog.Logger, st *store.Store, tc client.Client, mon *reachability.Monitor) starters {
	return starters{
		starter: &dispatch.Starter{Client: tc, Store: st, Log: log, RetryInterval: cfg.WebhookRetryInterval, Health: mon},
		jobs:    &dispatch.Jobs{Client: tc, Store: st, Log: log, Rate: cfg.ReplayRate, Health: mon},
	}
}

// runWorker runs the workers, the claimer or the sweeper of events owed a start, the
// job sweepers and the meters' consumer.
func (g *group) runWorker(ctx context.Context, cfg config.Config, log *slog.Logger, st *store.Store, tc client.Client, p Parts, endpoints *webhook.Endpoints, s starters, claimer *dispatch.Claimer) {
	acts := workflows.Activities{
		Delivery: &activities.Delivery{Store: st, Sender: endpoints.Sender, DisableAfter: cfg.WebhookDisableAfter,
			RetryInterval: cfg.WebhookRetryInterval, FailingAfter: cfg.WebhookFailingAfter},
		Retention: &activities.Retention{Store: st},
		Health: &activities.Health{Store: st, FailingAfter: cfg.WebhookFailingAfter, OrderMaxWait: cfg.WebhookOrderMaxWait,
			Pacing: &activities.Pacing{Store: st, Queue: pacedQueue(cfg, tc), KeyRate: wire.PacedKeyRate, Log: log}},
		BulkReplay:    &activities.BulkReplay{Store: st.OnJobsPool(), Rate: cfg.ReplayRate},
		MeterBackfill: &activities.MeterBackfill{Store: st.OnJobsPool(), AlertEventsPerHour: cfg.AlertEventsPerHour},
		// A deleted meter's figures are purged by pages on the jobs' pool (CONTRACT §21).
		MeterPurge: &activities.MeterPurge{Store: st.OnJobsPool(), Rows: p.PurgeRows},
		// So are a deleted endpoint's unfinished deliveries ended.
		EndpointDeletion: &activities.EndpointDeletion{Store: st.OnJobsPool(), Rows: p.DeletionRows},
	}
	g.run(func() {
		runWorker(ctx, tc, acts, cfg.WorkerActivitySlots, log, cmp.Or(p.WorkerRetry, DefaultWorkerRetry))
	})
	every := cmp.Or(p.SweepEvery, DefaultSweepEvery)
	if claimer != nil {
		// The claimer's poll is the sweep of events owed a start (and of replays).
		g.run(func() { claimer.Run(ctx) })
	} else {
		g.run(func() { s.starter.RunSweeper(ctx, every) })
	}
	g.run(func() { s.jobs.RunSweeper(ctx, every) })
	// Meters count usage rows in the processes that run the worker (`revops dev`,
	// `serve`, `worker`), any number of replicas: Consume takes an environment's rows
	// under its cursor lock, so they share the work without counting a row twice.
	g.run(func() {
		(&meters.Consumer{Store: st.OnJobsPool(), Consumers: cfg.MeterConsumers, AlertEventsPerHour: cfg.AlertEventsPerHour, Log: log}).Run(ctx)
	})
}

// runAPI listens and serves the API and the dashboard.
func (g *group) runAPI(ctx context.Context, cfg config.Config, log *slog.Logger, st *store.Store, p Parts, endpoints *webhook.Endpoints, mon *reachability.Monitor) error {
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	handler := NewHandler(st, api.Deps{
		Config:    cfg,
		Keys:      keys.NewManager(st),
		Log:       log,
		Endpoints: endpoints,
		Meters:    &meters.Queries{Store: st, MaxQueries: cfg.MeterQueries},
		Ready: []api.Check{
			{Name: "database", Check: st.Ping},
			{Name: "temporal", Check: mon.Check, Optional: true},
		},
	})
	srv := NewHTTPServer(handler, log)
	g.run(func() { g.report(serveHTTP(ctx, srv, ln, cfg.TLSCert, cfg.TLSKey)) })
	log.Info("API listening", "addr", ln.Addr().String())
	if p.Ready != nil {
		p.Ready <- ln.Addr().String()
	}
	return nil
}

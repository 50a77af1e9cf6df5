package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/config"
	"github.com/revops/revops/internal/metrics"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/webhook"
	"github.com/revops/revops/workflows"
)

// sweepEvery is how often the worker looks for events that have no workflow yet.
const sweepEvery = 5 * time.Second

func temporalOptions(cfg config.Config, log *slog.Logger) client.Options {
	return client.Options{
		HostPort:       cfg.TemporalAddress,
		Namespace:      cfg.TemporalNamespace,
		Logger:         sdklog.NewStructuredLogger(slog.New(warnOnly{log.Handler()})),
		MetricsHandler: metrics.TemporalHandler(),
	}
}

// startWorker runs the webhook worker and the outbox sweeper until the returned stop is called.
func startWorker(ctx context.Context, cfg config.Config, log *slog.Logger, st *store.Store, tc client.Client) (func(), error) {
	sender, err := webhook.NewSender(cfg.WebhookAllowPrivate, cfg.WebhookCAFile, cfg.AckSentence())
	if err != nil {
		return nil, fmt.Errorf("webhook sender: %w", err)
	}
	w := worker.New(tc, workflows.TaskQueue, worker.Options{})
	workflows.Register(w, &activities.Activities{Store: st, Sender: sender})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	sweepCtx, stopSweeper := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		newStarter(cfg, log, st, tc).RunSweeper(sweepCtx, sweepEvery)
	}()
	log.Info("worker started", "task_queue", workflows.TaskQueue)
	return func() {
		stopSweeper()
		<-done
		w.Stop()
	}, nil
}

// newStarter starts deliveries: after commit (the API's Dispatcher), on replay and from the sweeper.
func newStarter(cfg config.Config, log *slog.Logger, st *store.Store, tc client.Client) *workflows.Starter {
	return &workflows.Starter{Client: tc, Store: st, Log: log, RetryInterval: cfg.WebhookRetryInterval}
}

package meters

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ConsumeRows is about how many usage rows one consumer transaction counts: large
// enough that the rows of many ingest batches fold into one write of each figure, small
// enough that the environment's lock is held briefly.
const ConsumeRows = 100000

// BackfillRows is about how many usage rows one backfill page counts.
const BackfillRows = 5000

// waitingEnvironments bounds the environments one pass looks at.
const waitingEnvironments = 100

// Consume counts every environment's waiting usage batches into its meters until none
// waits, and says how many batches it took. It goes round the environments, one
// transaction (ConsumeRows) each per round, oldest waiting first, so that a busy
// environment never holds the others back; an environment another consumer holds is
// left to it. An environment that fails is skipped for the round, and its error returned
// after the round (its batches stay waiting: nothing is lost).
func Consume(ctx context.Context, st Store) (int, error) {
	total := 0
	for ctx.Err() == nil {
		envs, err := st.WaitingUsageEnvironments(ctx, waitingEnvironments)
		if err != nil {
			return total, err
		}
		took := 0
		var errs []error
		for _, env := range envs {
			n, err := st.ConsumeUsage(ctx, env, ConsumeRows, apply)
			if err != nil {
				errs = append(errs, fmt.Errorf("environment %s: %w", env, err))
			}
			took += n
		}
		total += took
		if len(errs) > 0 || took == 0 {
			return total, errors.Join(errs...)
		}
	}
	return total, nil
}

// Consumer runs Consume in a loop in every worker process: replicas share the work, each
// environment's batches being taken by one at a time (store.ConsumeUsage).
type Consumer struct {
	Store Store
	Every time.Duration // how often to look for waiting batches; default 200ms
	Log   *slog.Logger
}

// Run consumes until ctx ends. A failed pass (the database away) is logged and retried
// on the next tick: waiting batches stay waiting, so nothing is lost.
func (c *Consumer) Run(ctx context.Context) {
	every := c.Every
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		_, err := Consume(ctx, c.Store)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !failing:
			log.Warn("meter consumer cannot count usage; retrying", "err", err)
		case err == nil && failing:
			log.Info("meter consumer counts usage again")
		}
		failing = err != nil
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// BackfillPage counts the meter's next page of older rows (BackfillRows) into it; done
// once the meter is ready. A deleted meter gives apperr.ErrNotFound.
func BackfillPage(ctx context.Context, st Store, meterID string, now time.Time) (done bool, rows int, err error) {
	return st.BackfillMeterPage(ctx, meterID, BackfillRows, now, apply)
}

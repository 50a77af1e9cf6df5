package meters

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// ConsumeRows is about how many usage rows one consumer transaction counts.
const ConsumeRows = 20000

// BackfillRows is about how many usage rows one backfill page counts.
const BackfillRows = 5000

// Consume counts every environment's waiting usage batches into its meters, one
// transaction per environment and ConsumeRows, until none waits; it says how many
// batches it took.
func Consume(ctx context.Context, st Store) (int, error) {
	return 0, errors.New("meters: consume not implemented yet")
}

// Consumer runs Consume in a loop: every Every, and at once after a pass that found work.
type Consumer struct {
	Store Store
	Every time.Duration // default 250ms
	Log   *slog.Logger
}

// Run consumes until ctx ends.
func (c *Consumer) Run(ctx context.Context) {}

// BackfillPage counts the meter's next page of older rows (BackfillRows) into it; done
// once the meter is ready. A deleted meter gives apperr.ErrNotFound.
func BackfillPage(ctx context.Context, st Store, meterID string, now time.Time) (done bool, rows int, err error) {
	return false, 0, errors.New("meters: backfill not implemented yet")
}

package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/platform/apperr"
)

// ErrTypeMeterMissing: the meter was deleted (DELETE /v1/meters/{key}) while its backfill
// ran. Nothing is left to fill in: the workflow ends successfully on it.
const ErrTypeMeterMissing = "meter_not_found"

// ErrTypeMeterBusy: another step held the meter's environment; the page ran nothing and
// is retried after busyRetry (CONTRACT §21: one page of an environment at a time).
const ErrTypeMeterBusy = "meter_environment_busy"

// busyRetry is how long a page that found its environment busy waits for its turn.
const busyRetry = time.Second

// MeterBackfill holds the meter backfill activity's dependencies.
type MeterBackfill struct {
	Store meters.Store
	// AlertEventsPerHour caps the environment's meter-threshold-crossed events (the
	// pages' figures fire usage alerts too); 0 is the default.
	AlertEventsPerHour int
}

// MeterBackfillPageInput names the meter whose next page to count.
type MeterBackfillPageInput struct {
	MeterID string
}

// MeterBackfillPageOutput is what the page counted. Only counts: the workflow history
// never holds usage data.
type MeterBackfillPageOutput struct {
	Rows int  // rows of the meter's metric the page read (other products included)
	Done bool // the meter is ready: no page is left
}

// BackfillMeterPage counts the meter's next page of rows accepted before it (meters.
// BackfillPage): the page and the meter's progress commit in one transaction, so an
// attempt cut anywhere (a SIGKILLed worker, a timeout) is simply run again and counts
// each row once. The page is decided in the database, not in the workflow: its input
// carries no cursor, and a retry never depends on what the previous attempt said.
func (b *MeterBackfill) BackfillMeterPage(ctx context.Context, in MeterBackfillPageInput) (MeterBackfillPageOutput, error) {
	done, rows, err := meters.BackfillPageAlerting(ctx, b.Store, in.MeterID, time.Now(), b.AlertEventsPerHour)
	if errors.Is(err, apperr.ErrNotFound) {
		return MeterBackfillPageOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("meter %s not found", in.MeterID), ErrTypeMeterMissing, err)
	}
	if errors.Is(err, meters.ErrBusy) {
		// Its turn comes soon: the environment's other step (a consumer turn, another
		// meter's page) ends within its budget. Retried after busyRetry rather than the
		// policy's growing backoff, so a meter waiting its turn is not left minutes behind.
		return MeterBackfillPageOutput{}, temporal.NewApplicationErrorWithOptions("meter environment busy", ErrTypeMeterBusy,
			temporal.ApplicationErrorOptions{NextRetryDelay: busyRetry})
	}
	if answer, ok := panicAnswer(ctx, err, "meter_id", in.MeterID); ok {
		// Recovered by the page (meters.BackfillPage), whose error names the environment.
		return MeterBackfillPageOutput{}, answer
	}
	if err != nil {
		return MeterBackfillPageOutput{}, fmt.Errorf("backfill meter page: %w", err)
	}
	return MeterBackfillPageOutput{Rows: rows, Done: done}, nil
}

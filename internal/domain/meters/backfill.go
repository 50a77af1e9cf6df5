package meters

import (
	"context"
	"errors"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// BackfillRows is about how many usage rows one backfill page counts (whole batches: a
// batch is at most 1,000 rows and 1 MiB).
const BackfillRows = 5000

// pageTurn is the consumer turn a backfill page takes first: small and fixed, so that a
// page holds its environment about as long as a consumer turn does, whatever the
// consumer's own budget for the environment has adapted to.
var pageTurn = Budget{RowMeters: 8_000, Bytes: 1 << 20}

// ErrBusy is a backfill page that ran nothing because another step (the consumer, or a
// page of another of the environment's meters) holds the environment: at most one runs
// at a time, and the others wait their turn on revops-jobs rather than on the lock,
// holding neither a connection nor a job slot (CONTRACT §21).
var ErrBusy = errors.New("another meter step holds the environment")

// BackfillPage counts the meter's next page of rows accepted before it; done once the
// meter is ready. The page first takes the environment's consumer turn: pages back to
// back would otherwise keep the environment's cursor from the consumer, and as_of would
// stand still for every meter of the environment. A deleted meter gives
// apperr.ErrNotFound; an environment held by another step, ErrBusy.
func BackfillPage(ctx context.Context, st Store, meterID string, now time.Time) (done bool, rows int, err error) {
	return BackfillPageAlerting(ctx, st, meterID, now, 0)
}

// BackfillPageAlerting is BackfillPage with the environment's cap of alert events per
// hour (REVOPS_ALERT_EVENTS_PER_HOUR; 0 is DefaultAlertEventsPerHour): the page's
// figures fire usage alerts as the consumer's do (CONTRACT §24).
func BackfillPageAlerting(ctx context.Context, st Store, meterID string, now time.Time, alertEvents int) (done bool, rows int, err error) {
	return backfillPage(ctx, st, meterID, now, Budget{RowMeters: BackfillRows, Bytes: stepBytes, AlertEvents: alertEvents})
}

// backfillPage is BackfillPage with pages within b. A panic on the environment's data
// ends this page only (guarded); its activity's retry policy then sets the meter aside
// for a growing while.
func backfillPage(ctx context.Context, st Store, meterID string, now time.Time, b Budget) (done bool, rows int, err error) {
	m, err := st.MeterByID(ctx, meterID)
	if err != nil {
		return false, 0, err
	}
	var ran bool
	err = guarded("meter_backfill_page", m.EnvironmentID, func() (err error) {
		ran, err = inCursor(ctx, st, models.Env{OrganizationID: m.OrganizationID, ID: m.EnvironmentID}, func(tx *store.Tx) error {
			m, err := tx.MeterByID(meterID) // as of the lock: deleted meanwhile, or made ready
			if err != nil || m.Status == models.MeterReady {
				done = err == nil
				return err
			}
			if _, _, err := consumeStep(tx, pageTurn); err != nil {
				return err
			}
			var finished bool
			if rows, finished, err = backfillStep(tx, m, b); err != nil {
				return err
			}
			if finished {
				done = true
				if err := tx.MarkMeterReady(m, now); err != nil {
					return err
				}
			}
			return fireAlerts(tx, b.AlertEvents)
		})
		return err
	})
	if err == nil && !ran {
		return false, 0, ErrBusy
	}
	return done, rows, err
}

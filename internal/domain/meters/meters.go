// Package meters turns an environment's usage rows into billable figures (CONTRACT §18):
// meter definitions, the consumer that counts every accepted usage row into every meter
// of its environment exactly once, the backfill of a new meter's older rows, and the
// values read from the kept figures.
package meters

import (
	"context"
	"errors"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/envgate"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Store is what meters need of the database. Meter work runs in transactions the store
// opens and the meters package fills in (InTx): a request's for definitions, which waits
// for the environment's usage cursor when it creates or deletes a meter; a consumer
// step's or a backfill page's, which takes the cursor or skips a busy environment
// (inCursor).
type Store interface {
	InTx(ctx context.Context, env models.Env, fn func(tx *store.Tx) error) ([]models.Event, error)
	Meters(ctx context.Context, env models.Env, page store.Page) ([]models.Meter, bool, error)
	Meter(ctx context.Context, env models.Env, key string) (models.Meter, error)
	MeterByID(ctx context.Context, id string) (models.Meter, error)
	WaitingUsageEnvironments(ctx context.Context, except []string, limit int) ([]string, error)
	MeterAsOf(ctx context.Context, m models.Meter, now time.Time) (time.Time, error)
	MeterFigures(ctx context.Context, q store.FigureQuery) ([]models.MeterFigure, error)
	MeterAlerts(ctx context.Context, env models.Env, meterID string, page store.Page) ([]models.MeterAlert, bool, error)
	MeterAlert(ctx context.Context, env models.Env, meterID, id string) (models.MeterAlert, error)
	AlertsOfMeters(ctx context.Context, env models.Env, meterIDs []string, perMeter int) (map[string][]models.MeterAlert, error)
	FiringsNow(ctx context.Context, env models.Env, alertIDs []string, now time.Time, limit int) ([]models.MeterAlertFiring, bool, error)
}

var _ Store = (*store.Store)(nil)

// Definition is a meter as POST /v1/meters defines it, checked (DecodeCreate).
type Definition struct {
	Key         string
	Description string
	MetricName  string   // filter.metric_name
	Product     string   // filter.product; "" = any
	Aggregation string   // models.Agg*
	ValueKey    string   // unique_count only
	GroupBy     []string // 0..3 metadata keys
}

// Queries reads meters' values (Values) for the API and the dashboard, under the
// process's gate on values queries running at once: built once per process
// (internal/app). Every other verb of the package is a function over a Store.
type Queries struct {
	Store Store
	// MaxQueries is how many values queries of one environment run at once in this
	// process (cfg.MeterQueries, CONTRACT §21); the next waits up to envgate.Wait, then
	// is refused 429 rate_limited. 0: no bound.
	MaxQueries int
	queries    envgate.Gate
}

// MaxMeters is how many meters an environment may have (CONTRACT §18).
const MaxMeters = 32

// Codes of the meter limits (CONTRACT §18).
const (
	CodeTooManyMeters = "too_many_meters"
	CodeMeterKeyTaken = "meter_key_taken"
)

// Create records a meter, with reply's answer (its Object); the backfill of one with
// rows to backfill is a job its transaction records, started after commit
// (store.AfterCommit).
func Create(ctx context.Context, st Store, env models.Env, d Definition, now time.Time, reply idempotency.Reply[Object]) (models.Meter, error) {
	m := models.Meter{
		Key: d.Key, Description: d.Description, FilterMetricName: d.MetricName, FilterProduct: d.Product,
		Aggregation: d.Aggregation, ValueKey: d.ValueKey, GroupBy: d.GroupBy,
	}
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error { return create(tx, &m, reply) })
	return m, err
}

// create checks the limit and the key, then, under the environment's usage cursor lock,
// checks them again and splits the environment's usage between the consumer and the new
// meter's backfill: the batches the consumer took so far (gen at most the cursor's) and
// the part of a batch it is applying in parts are the backfill's; every later row is the
// consumer's, which sees the meter from this commit on. The checks before the lock answer
// a refused request without waiting for it (CONTRACT §21).
func create(tx *store.Tx, m *models.Meter, reply idempotency.Reply[Object]) error {
	if err := checkRoom(tx, m.Key); err != nil {
		return err
	}
	cursor, _, err := tx.LockUsageCursor(store.Wait)
	if err != nil {
		return err
	}
	if err := checkRoom(tx, m.Key); err != nil {
		return err
	}
	m.BackfillGen, m.Status = cursor.Gen, models.MeterReady
	if m.BackfillAsOf, err = tx.OldestTakenBatch(cursor.Gen); err != nil {
		return err
	}
	if cursor.PartSeq != 0 {
		m.BackfillPartSeq, m.BackfillPartAfter = cursor.PartSeq, cursor.PartAfter
		part, err := tx.Batch(cursor.PartSeq)
		if err != nil {
			return err
		}
		at := part.ReceivedAt.UTC()
		if m.BackfillAsOf == nil || at.Before(*m.BackfillAsOf) {
			m.BackfillAsOf = &at
		}
	}
	if m.BackfillAsOf != nil {
		m.Status = models.MeterBackfilling
	}
	if err := tx.CreateMeter(m); err != nil {
		if errors.Is(err, store.ErrMeterKeyTaken) {
			return keyTaken(m.Key)
		}
		return err
	}
	return reply.Keep(tx, ToObject(*m))
}

// checkRoom refuses a meter over the environment's limit or with a key it has. A deleted
// meter holds its place until its figures are purged (CONTRACT §21): the purge is work
// the environment still causes.
func checkRoom(tx *store.Tx, key string) error {
	defined, purging, err := tx.CountMeters()
	if err != nil {
		return err
	}
	if defined+purging >= MaxMeters {
		return apperr.Invalid(errors.New("too many meters"), CodeTooManyMeters, "",
			"This environment already has %d meters, counting deleted meters whose figures are still being purged: the most it may have. Delete one first, or wait for a purge to end.", MaxMeters)
	}
	taken, err := tx.MeterKeyTaken(key)
	if err != nil {
		return err
	}
	if taken {
		return keyTaken(key)
	}
	return nil
}

func keyTaken(key string) error {
	return apperr.Conflict(CodeMeterKeyTaken, "A meter with key %q already exists in this environment.", key)
}

// List lists an environment's meters, newest first.
func List(ctx context.Context, st Store, env models.Env, page store.Page) ([]models.Meter, bool, error) {
	return st.Meters(ctx, env, page)
}

// Get finds a meter by key.
func Get(ctx context.Context, st Store, env models.Env, key string) (models.Meter, error) {
	return st.Meter(ctx, env, key)
}

// SetDescription changes a meter's description, the one field PATCH changes, with
// reply's answer (its Object).
func SetDescription(ctx context.Context, st Store, env models.Env, key, description string, now time.Time, reply idempotency.Reply[Object]) (models.Meter, error) {
	var m models.Meter
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		var err error
		if m, err = tx.LockMeter(key); err != nil {
			return err
		}
		if m.Description != description {
			m.Description, m.UpdatedAt = description, tx.Now()
			if err := tx.SaveMeterDescription(m); err != nil {
				return err
			}
		}
		return reply.Keep(tx, ToObject(m))
	})
	return m, err
}

// Delete stops a meter and answers at once (CONTRACT §21): the meter's row goes and its
// purge is recorded in one transaction (store.DeleteMeter); its figures are purged after
// commit by its MeterPurge workflow, in bounded pages on revops-jobs, a job the
// transaction records and the store hands to the job starter once committed. reply's
// answer is the deleted stub (ToDeleted).
func Delete(ctx context.Context, st Store, env models.Env, key string, reply idempotency.Reply[Deleted]) (models.Meter, error) {
	var m models.Meter
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		// Found before the lock, so an unknown key is 404 at once; found again under it,
		// since a concurrent delete may have taken it meanwhile.
		if _, err := tx.FindMeter(key); err != nil {
			return err
		}
		if _, _, err := tx.LockUsageCursor(store.Wait); err != nil {
			return err
		}
		var err error
		if m, err = tx.FindMeter(key); err != nil {
			return err
		}
		if err := tx.DeleteMeter(m); err != nil {
			return err
		}
		return reply.Keep(tx, ToDeleted(m))
	})
	return m, err
}

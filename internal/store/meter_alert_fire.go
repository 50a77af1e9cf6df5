package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/models"
)

// The store side of usage alerts firing (CONTRACT §24): a meter transaction (InMeterTx)
// reads the alerts of its environment, the firings already recorded for the series it
// wrote, and the day figures a month's value adds up; it records the new firings, the
// environment's hourly event count and the meter-threshold-crossed events, all in the
// transaction that wrote the figures. What fires, and which events are held back, is
// the meters package's decision.
func init() {
	// Firings carry their meter, so that a deleted meter's purge finds them once its
	// alerts are gone; meter_alert_caps is the environment's hourly count of
	// meter-threshold-crossed events and of the firings held back past it.
	register(migration{version: 105, name: "meter_alert_firing_meter_and_caps", sql: `
ALTER TABLE meter_alert_firings ADD COLUMN meter_id TEXT NOT NULL DEFAULT '';
CREATE INDEX meter_alert_firings_meter ON meter_alert_firings (meter_id);
CREATE TABLE meter_alert_caps (
	environment_id TEXT PRIMARY KEY,
	hour_start {{ts}} NOT NULL,
	sent INTEGER NOT NULL DEFAULT 0,
	held_back INTEGER NOT NULL DEFAULT 0
);`})
}

// firingChunk bounds the rows (or keys) of one statement (at most 11 parameters each):
// SQLite's and PostgreSQL's parameters are bounded.
const firingChunk = 500

// Emit adds events to the meter transaction: InMeterTx writes them (the outbox) before
// the commit, with their deliveries, and hands them to AfterCommit once committed, as
// InTx does.
func (t *MeterTx) Emit(e ...Emit) { t.emits = append(t.emits, e...) }

// Now is the transaction's change time, fixed at its first call: firings and the events
// that list them show the same time.
func (t *MeterTx) Now() time.Time {
	if t.at.IsZero() {
		t.at = changeTime()
	}
	return t.at
}

// writeEmits writes the events the transaction emitted, in its environment.
func (t *MeterTx) writeEmits() error {
	if len(t.emits) == 0 {
		return nil
	}
	var e models.Environment
	if err := t.db.Where("id = ?", t.envID).Take(&e).Error; err != nil {
		return notFound(err, "environment "+t.envID)
	}
	env := Env{OrganizationID: e.OrganizationID, ID: e.ID, Name: e.Name}
	var err error
	t.written, err = writeEvents(txOn(t.db, t.dialect, env, t.Now()), t.seam.fanOutOf(), t.emits, "")
	return err
}

// WroteFigures tells whether this transaction wrote figures.
func (t *MeterTx) WroteFigures() bool { return len(t.wrote) > 0 }

// Wrote lists the figures this transaction wrote (the last value of each), in no order.
func (t *MeterTx) Wrote() []models.MeterFigure {
	out := make([]models.MeterFigure, 0, len(t.wrote))
	for _, f := range t.wrote {
		out = append(out, f)
	}
	return out
}

// MeterAlerts lists the alerts of the environment's meters, oldest first.
func (t *MeterTx) MeterAlerts() ([]models.MeterAlert, error) {
	var as []models.MeterAlert
	if err := t.db.Where("environment_id = ?", t.envID).Order("created_at, id").Find(&as).Error; err != nil {
		return nil, fmt.Errorf("meter alerts: %w", err)
	}
	return as, nil
}

// FiringKey names one firing: an alert, a series and a window.
type FiringKey struct {
	AlertID, AccountID, Groups string
	WindowStart                time.Time
}

// KnownFired tells, for each of keys, whether this process knows its firing recorded
// (firedCache): no statement, and a key it does not know may be recorded still (Fired).
func (t *MeterTx) KnownFired(keys []FiringKey) []bool { return t.fired.known(keys) }

// Fired says which of keys have a firing recorded: those this process knows of
// (firedCache), then the others from the database, in a few statements whatever their
// number (by alert, window range and accounts, in chunks of accounts).
func (t *MeterTx) Fired(keys []FiringKey) ([]FiringKey, error) {
	var out []FiringKey
	misses := map[firedKey]bool{}
	var alerts, accounts []string
	var from, to time.Time
	for _, k := range keys {
		fk := firedKeyOf(k)
		if t.fired.has(fk) {
			out = append(out, k)
			continue
		}
		if misses[fk] {
			continue
		}
		misses[fk] = true
		if !slices.Contains(alerts, k.AlertID) {
			alerts = append(alerts, k.AlertID)
		}
		accounts = append(accounts, k.AccountID)
		if from.IsZero() || k.WindowStart.Before(from) {
			from = k.WindowStart
		}
		if k.WindowStart.After(to) {
			to = k.WindowStart
		}
	}
	if len(misses) == 0 {
		return out, nil
	}
	slices.Sort(accounts)
	accounts = slices.Compact(accounts)
	var found []firedKey
	for chunk := range slices.Chunk(accounts, firingChunk) {
		var got []FiringKey
		if err := t.db.Raw(`SELECT alert_id, account_id, groups, window_start FROM meter_alert_firings
			WHERE alert_id IN ? AND window_start >= ? AND window_start <= ? AND account_id IN ?`,
			alerts, from.UTC(), to.UTC(), chunk).Scan(&got).Error; err != nil {
			return nil, fmt.Errorf("meter alert firings: %w", err)
		}
		for _, k := range got {
			if fk := firedKeyOf(k); misses[fk] {
				found = append(found, fk)
				out = append(out, fk.key())
			}
		}
	}
	t.fired.add(found) // committed by another transaction: recorded for good
	return out, nil
}

// DayFigures reads meterID's day figures in [from, to) of the given series (a month's
// days, which a sum, count or max meter adds up into its month).
func (t *MeterTx) DayFigures(meterID string, series []SeriesKey, from, to time.Time) ([]models.MeterFigure, error) {
	var out []models.MeterFigure
	for chunk := range slices.Chunk(series, firingChunk) {
		pairs := strings.TrimSuffix(strings.Repeat("(?, ?),", len(chunk)), ",")
		args := []any{meterID, from.UTC(), to.UTC()}
		for _, s := range chunk {
			args = append(args, s.AccountID, s.Groups)
		}
		got, err := scanFigures(t.db.Raw(`SELECT `+figureColumns+` FROM meter_figures f
			WHERE meter_id = ? AND kind = 'day' AND window_start >= ? AND window_start < ?
			AND (account_id, groups) IN (VALUES `+pairs+`)`, args...).Rows())
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// InsertFirings records firings; one already recorded (the same alert, series and
// window) is left as it is.
func (t *MeterTx) InsertFirings(fs []models.MeterAlertFiring) error {
	if len(fs) == 0 {
		return nil
	}
	if err := t.db.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(fs, firingChunk).Error; err != nil {
		return fmt.Errorf("record meter alert firings: %w", err)
	}
	for _, f := range fs {
		t.firing = append(t.firing, firedKeyOf(FiringKey{AlertID: f.AlertID, AccountID: f.AccountID, Groups: f.Groups, WindowStart: f.WindowStart}))
	}
	return nil
}

// AlertCap is an environment's count of meter-threshold-crossed events in the hour
// starting at HourStart, and of the firings held back (not listed by any event) since
// the last event sent.
type AlertCap struct {
	HourStart      time.Time
	Sent, HeldBack int
}

// AlertCap reads the environment's count (zero when it has none). The transaction holds
// the environment's usage cursor, as every writer of the count does: it cannot change
// before the transaction ends.
func (t *MeterTx) AlertCap() (AlertCap, error) {
	var got []AlertCap
	if err := t.db.Raw(`SELECT hour_start, sent, held_back FROM meter_alert_caps WHERE environment_id = ?`,
		t.envID).Scan(&got).Error; err != nil {
		return AlertCap{}, fmt.Errorf("meter alert cap: %w", err)
	}
	if len(got) == 0 {
		return AlertCap{}, nil
	}
	return got[0], nil
}

// SaveAlertCap writes the environment's count.
func (t *MeterTx) SaveAlertCap(c AlertCap) error {
	if err := t.db.Exec(`INSERT INTO meter_alert_caps (environment_id, hour_start, sent, held_back) VALUES (?, ?, ?, ?)
		ON CONFLICT (environment_id) DO UPDATE SET hour_start = excluded.hour_start, sent = excluded.sent, held_back = excluded.held_back`,
		t.envID, c.HourStart.UTC(), c.Sent, c.HeldBack).Error; err != nil {
		return fmt.Errorf("save meter alert cap: %w", err)
	}
	return nil
}

// OldestWaitingBatch is the receipt time of the environment's oldest batch the consumer
// has not taken, as of this transaction (nil: none): with the backfills', the as_of of
// the figures it wrote (MeterAsOf).
func (t *MeterTx) OldestWaitingBatch() (*time.Time, error) {
	var got []time.Time
	if err := t.db.Raw(`SELECT received_at FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY received_at LIMIT 1`,
		t.envID).Scan(&got).Error; err != nil {
		return nil, fmt.Errorf("oldest waiting usage batch: %w", err)
	}
	if len(got) == 0 {
		return nil, nil
	}
	at := got[0].UTC()
	return &at, nil
}

// deleteMeterAlerts removes a deleted meter's alerts, in DeleteMeter's transaction (at
// most 32, CONTRACT §24); their firings go with its figures (PurgeMeterPage).
func deleteMeterAlerts(tx *gorm.DB, meterID string) error {
	if err := tx.Exec(`DELETE FROM meter_alerts WHERE meter_id = ?`, meterID).Error; err != nil {
		return fmt.Errorf("delete alerts of meter %s: %w", meterID, err)
	}
	return nil
}

// PutMeterAlert writes an alert row as it is: the firing tests' fixture (the API's
// creation, with its checks, is the alerts API's verb).
func (s *Store) PutMeterAlert(ctx context.Context, a models.MeterAlert) error {
	a.CreatedAt = a.CreatedAt.UTC().Truncate(time.Microsecond)
	if err := s.db.WithContext(ctx).Create(&a).Error; err != nil {
		return fmt.Errorf("put meter alert: %w", err)
	}
	return nil
}

// MeterAlertFirings lists every firing of an environment, by alert, series and window:
// what tests and operators compare with the usage rows.
func (s *Store) MeterAlertFirings(ctx context.Context, envID string) ([]models.MeterAlertFiring, error) {
	var fs []models.MeterAlertFiring
	if err := s.db.WithContext(ctx).Where("environment_id = ?", envID).
		Order("alert_id, account_id, groups, window_start").Find(&fs).Error; err != nil {
		return nil, fmt.Errorf("meter alert firings: %w", err)
	}
	return fs, nil
}

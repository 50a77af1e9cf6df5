package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// Deleting a meter (CONTRACT §21): DeleteMeter removes the meter's row and records a
// meter_purges row in the same transaction, so the key is free and the meter 404 at
// once; its figures are then purged in the background, a bounded page at a time
// (PurgeMeterPage, run by the MeterPurge workflow on revops-jobs), and the purge row
// removed last (EndMeterPurge). Until then the purge row counts toward the environment's
// 32 meters (§18), so deleting and re-creating cannot pile up unpurged figures.
func init() {
	register(migration{version: 93, name: "meter_purges", sql: scopedTable("meter_purges", "meter_id", `
	meter_key TEXT NOT NULL,
	created_at {{ts}} NOT NULL,
	started_at {{ts}}
);
CREATE INDEX meter_purges_environment ON meter_purges (environment_id);
CREATE INDEX meter_purges_unstarted ON meter_purges (created_at) WHERE started_at IS NULL`)})
}

// recordMeterPurge records, in DeleteMeter's transaction, that m's figures are to be purged.
func recordMeterPurge(tx *gorm.DB, m models.Meter, now time.Time) (models.MeterPurge, error) {
	p := models.MeterPurge{MeterID: m.ID, OrganizationID: m.OrganizationID, EnvironmentID: m.EnvironmentID,
		MeterKey: m.Key, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	if err := tx.Create(&p).Error; err != nil {
		return p, fmt.Errorf("record meter purge: %w", err)
	}
	return p, nil
}

// PurgeMeterPage deletes at most maxRows of a deleted meter's figure rows, table after
// table in purgeOrder, and says how many it deleted; fewer than maxRows means nothing is
// left. Each statement commits alone (a page cut short just leaves the rest to the next
// one), and a table is started only once the one before it is empty: member days go
// before the series that number them, so no member day ever outlives its series. A
// deleted meter's rows are never written again (DeleteMeter took the usage cursor lock),
// so an empty table stays empty. A job's own bounded batch: a named exception to InTx.
func (s *Store) PurgeMeterPage(ctx context.Context, meterID string, maxRows int) (rows int, err error) {
	ctx, end := s.span(ctx, "db meter purge page")
	defer end(&err)
	for _, stmt := range purgeStatements(s.dialect) {
		left := maxRows - rows
		if left <= 0 {
			break
		}
		res := s.db.WithContext(ctx).Exec(stmt, meterID, left)
		if res.Error != nil {
			return rows, fmt.Errorf("purge figures of meter %s: %w", meterID, res.Error)
		}
		rows += int(res.RowsAffected)
		if int(res.RowsAffected) == left {
			break // this table may hold more: the next page goes on with it
		}
	}
	return rows, nil
}

// purgeStatements deletes up to ? (the second argument) of the meter's (the first) rows
// of each table, in purge order, by physical row id: a LIMIT in a DELETE is neither SQL
// nor PostgreSQL, and selecting the row ids through the table's meter index reads only
// the rows it deletes.
func purgeStatements(dialect string) []string {
	if dialect == "postgres" {
		return purgeStatementsPostgres
	}
	return purgeStatementsSQLite
}

// ctid = ANY(ARRAY(…)): one TID scan of the rows the index found (IN would hash them first).
var purgeStatementsPostgres = []string{
	`DELETE FROM meter_member_days WHERE ctid = ANY(ARRAY(SELECT d.ctid FROM meter_series s JOIN meter_member_days d ON d.series = s.id WHERE s.meter_id = ? LIMIT ?))`,
	`DELETE FROM meter_series WHERE ctid = ANY(ARRAY(SELECT ctid FROM meter_series WHERE meter_id = ? LIMIT ?))`,
	`DELETE FROM meter_values WHERE ctid = ANY(ARRAY(SELECT ctid FROM meter_values WHERE meter_id = ? LIMIT ?))`,
	`DELETE FROM meter_figures WHERE ctid = ANY(ARRAY(SELECT ctid FROM meter_figures WHERE meter_id = ? LIMIT ?))`,
	`DELETE FROM meter_alert_firings WHERE ctid = ANY(ARRAY(SELECT ctid FROM meter_alert_firings WHERE meter_id = ? LIMIT ?))`,
}

var purgeStatementsSQLite = []string{
	`DELETE FROM meter_member_days WHERE rowid IN (SELECT d.rowid FROM meter_series s JOIN meter_member_days d ON d.series = s.id WHERE s.meter_id = ? LIMIT ?)`,
	`DELETE FROM meter_series WHERE rowid IN (SELECT rowid FROM meter_series WHERE meter_id = ? LIMIT ?)`,
	`DELETE FROM meter_values WHERE rowid IN (SELECT rowid FROM meter_values WHERE meter_id = ? LIMIT ?)`,
	`DELETE FROM meter_figures WHERE rowid IN (SELECT rowid FROM meter_figures WHERE meter_id = ? LIMIT ?)`,
	`DELETE FROM meter_alert_firings WHERE rowid IN (SELECT rowid FROM meter_alert_firings WHERE meter_id = ? LIMIT ?)`,
}

// EndMeterPurge removes a purged meter's purge row: its slot among the environment's 32
// is free again. Removing a row already gone is no error (a retried activity).
func (s *Store) EndMeterPurge(ctx context.Context, meterID string) error {
	return meterPurges.end(ctx, s.db, meterID)
}

// UnstartedPurges lists purge rows recorded before before whose MeterPurge workflow was
// not started, oldest first (the sweeper).
func (s *Store) UnstartedPurges(ctx context.Context, before time.Time, limit int) ([]models.MeterPurge, error) {
	return meterPurges.unstarted(ctx, s.db, before, limit)
}

// MarkPurgeStarted records that a deleted meter's MeterPurge workflow was started.
func (s *Store) MarkPurgeStarted(ctx context.Context, meterID string, at time.Time) error {
	return meterPurges.markStarted(ctx, s.db, meterID, at)
}

var meterPurges = jobRows[models.MeterPurge]{table: "meter_purges", key: "meter_id",
	what: "purge of meter", list: "unstarted meter purges"}

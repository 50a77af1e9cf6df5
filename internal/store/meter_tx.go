package store

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// meterWork is what a transaction's meter work keeps while it holds the environment's
// usage cursor (LockUsageCursor): meters' kept figures are read, combined (in Go,
// exactly, on both databases) and written back by one transaction at a time per
// environment, through the process's figure cache as of the cursor's count of writes.
type meterWork struct {
	cursor UsageCursor
	view   map[figureID]models.MeterFigure // the cache as of cursor.Writes (nil: none)
	wrote  map[figureID]models.MeterFigure // figures this transaction wrote
	meters []models.Meter                  // the environment's meters as last read (Meters; nil: read them)
	firing []firedKey                      // firings this transaction recorded: known to fired once committed
}

// errNoCursor is a verb of meter work called by a transaction that does not hold the
// environment's usage cursor (or by a savepoint's Tx): the figure and firing caches are
// kept only for the transaction holding it, which alone writes figures.
var errNoCursor = errors.New("meter work needs the environment's usage cursor (LockUsageCursor)")

// work is the transaction's meter work, or errNoCursor.
func (tx *Tx) work() (*meterWork, error) {
	if tx.meter == nil {
		return nil, errNoCursor
	}
	return tx.meter, nil
}

// finish records, before the commit, that the transaction wrote figures.
func (w *meterWork) finish(tx *Tx) error {
	if len(w.wrote) == 0 {
		return nil
	}
	if err := tx.db.Exec(`UPDATE usage_cursors SET writes = writes + 1 WHERE environment_id = ?`, tx.env.ID).Error; err != nil {
		return fmt.Errorf("count meter figure writes: %w", err)
	}
	return nil
}

// committed keeps what the committed transaction wrote in the figure cache, and the
// firings it recorded in the fired cache.
func (w *meterWork) committed(tx *Tx) {
	tx.fired.add(w.firing)
	if len(w.wrote) > 0 {
		tx.figures.committed(tx.env.ID, w.cursor.Writes, w.view, w.wrote)
	}
}

// FigureKey names one kept figure of a meter.
type FigureKey struct {
	Kind        string
	WindowStart time.Time
	AccountID   string
	Groups      string
}

// SeriesKey names one series of a meter: an account and a group.
type SeriesKey struct {
	AccountID, Groups string
}

// MemberKey names one distinct value of a unique_count meter in one series, by number.
type MemberKey struct {
	Series, Member int64
}

// UsageRow is a stored usage row as meters read it.
type UsageRow struct {
	ID          string
	BatchSeq    int64
	AccountID   string
	Product     string
	MetricName  string
	MetricValue string
	Metadata    []byte // JSON object
	Timestamp   time.Time
}

// Figures reads the kept figures of meterID with the given keys (missing ones are absent).
func (tx *Tx) Figures(meterID string, keys []FigureKey) ([]models.MeterFigure, error) {
	w, err := tx.work()
	if err != nil {
		return nil, err
	}
	var out []models.MeterFigure
	var misses []FigureKey
	for _, k := range keys {
		id := idOf(meterID, k)
		if f, ok := w.wrote[id]; ok {
			out = append(out, f)
		} else if f, ok := w.view[id]; ok {
			out = append(out, f)
		} else {
			misses = append(misses, k)
		}
	}
	got, err := tx.readFigures(meterID, misses)
	return append(out, got...), err
}

// readFigures is Figures from the database.
func (tx *Tx) readFigures(meterID string, keys []FigureKey) ([]models.MeterFigure, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if tx.dialect == "postgres" {
		return readFiguresPG(tx.db, meterID, keys)
	}
	return readFiguresSQLite(tx.db, meterID, keys)
}

// figureColumns are the columns scanFigures reads, of meter_figures as f.
const figureColumns = `f.meter_id, f.kind, f.window_start, f.account_id, f.groups, f.g1, f.g2, f.g3, f.value, f.slots, f.latest_ts, f.latest_seq, f.latest_id`

// scanFigures reads figureColumns by hand: reflection per row would cost more than the
// query. PostgreSQL's statements go straight to the connection, so that their arrays
// reach unnest whole (GORM would expand them into lists).
func scanFigures(rows *sql.Rows, err error) ([]models.MeterFigure, error) {
	return scanAll(rows, err, "meter figures", func(rows *sql.Rows, f *models.MeterFigure) error {
		return rows.Scan(&f.MeterID, &f.Kind, &f.WindowStart, &f.AccountID, &f.Groups, &f.G1, &f.G2, &f.G3,
			&f.Value, &f.Slots, &f.LatestTS, &f.LatestSeq, &f.LatestID)
	})
}

// SaveFigures writes figures, replacing the kept ones with the same key.
func (tx *Tx) SaveFigures(fs []models.MeterFigure) error {
	w, err := tx.work()
	if err != nil || len(fs) == 0 {
		return err
	}
	if err := tx.writeFigures(fs); err != nil {
		return err
	}
	if w.wrote == nil {
		w.wrote = make(map[figureID]models.MeterFigure, len(fs))
	}
	for _, f := range fs {
		w.wrote[idOf(f.MeterID, FigureKey{Kind: f.Kind, WindowStart: f.WindowStart, AccountID: f.AccountID, Groups: f.Groups})] = f
	}
	return nil
}

// writeFigures is SaveFigures' database write (fs not empty).
func (tx *Tx) writeFigures(fs []models.MeterFigure) error {
	if tx.dialect == "postgres" {
		return writeFiguresPG(tx.db, fs)
	}
	return writeFiguresSQLite(tx.db, fs)
}

// SeriesIDs numbers the series of meterID (meter_series), numbering the new ones: ids[i]
// is keys[i]'s.
func (tx *Tx) SeriesIDs(meterID string, keys []SeriesKey) ([]int64, error) {
	accts, groups := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		accts[i], groups[i] = k.AccountID, k.Groups
	}
	return tx.number(meterID, "meter_series", []string{"account_id", "groups"}, accts, groups)
}

// ValueIDs numbers the distinct values of meterID (meter_values) the same way.
func (tx *Tx) ValueIDs(meterID string, values []string) ([]int64, error) {
	return tx.number(meterID, "meter_values", []string{"value"}, values)
}

// number reads (and adds, for the missing ones) the ids of rows of table keyed by
// meter_id and cols, whose values are in vals (one slice per column, same length). Every
// writer of a meter's numbers (consumer transactions, backfill pages) holds the
// environment's usage cursor lock, so a key read missing is still missing when inserted
// (and the table's unique key would refuse a second number if it were not).
func (tx *Tx) number(meterID, table string, cols []string, vals ...[]string) ([]int64, error) {
	if _, err := tx.work(); err != nil {
		return nil, err
	}
	if len(vals[0]) == 0 {
		return []int64{}, nil
	}
	if tx.dialect == "postgres" {
		return numberPG(tx.db, meterID, table, cols, vals...)
	}
	return numberSQLite(tx.db, meterID, table, cols, vals...)
}

// MemberDays reads the kept days of the given distinct values on days in [from, to)
// (days since 1970-01-01 UTC).
func (tx *Tx) MemberDays(keys []MemberKey, from, to int32) ([]models.MeterMemberDay, error) {
	if tx.dialect == "postgres" {
		return memberDaysPG(tx.db, keys, from, to)
	}
	return memberDaysSQLite(tx.db, keys, from, to)
}

// SaveMemberDays writes member days, replacing the kept ones with the same key.
func (tx *Tx) SaveMemberDays(ms []models.MeterMemberDay) error {
	if _, err := tx.work(); err != nil || len(ms) == 0 {
		return err
	}
	if tx.dialect == "postgres" {
		return saveMemberDaysPG(tx.db, ms)
	}
	return saveMemberDaysSQLite(tx.db, ms)
}

// scanMemberDays is scanFigures for member days.
func scanMemberDays(rows *sql.Rows, err error) ([]models.MeterMemberDay, error) {
	return scanAll(rows, err, "meter member days", func(rows *sql.Rows, m *models.MeterMemberDay) error {
		return rows.Scan(&m.Series, &m.Member, &m.Day, &m.Minutes)
	})
}

package store

import (
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// MeterTx is the transaction of a consumer or backfill page: it reads and writes a
// meter's kept figures while holding the environment's usage cursor lock, so that
// figures are read, combined (in Go, exactly, on both databases) and written back by one
// transaction at a time per environment.
type MeterTx struct {
	db      *gorm.DB
	dialect string
	envID   string
	cursor  UsageCursor
	cache   *figureCache
	view    map[figureID]models.MeterFigure // the cache as of cursor.Writes (nil: none)
	wrote   map[figureID]models.MeterFigure // figures this transaction wrote
	meters  []models.Meter                  // the environment's meters as last read (Meters; nil: read them)
	emits   []Emit                          // events to write before the commit (Emit)
	fired   *firedCache
	firing  []firedKey // firings this transaction recorded: known to fired once committed
	at      time.Time  // the change time (Now)
	seam    *seam      // the store's fan-out and after commit
	written []models.Event
}

// meterTx starts the meter work of tx, which holds envID's cursor.
func (s *Store) meterTx(tx *gorm.DB, envID string, cursor UsageCursor) *MeterTx {
	return &MeterTx{db: tx, dialect: s.dialect, envID: envID, cursor: cursor, cache: s.figures, fired: s.fired,
		view: s.figures.view(envID, cursor.Writes), seam: s.seam}
}

// finish records, before the commit, that the transaction wrote figures.
func (t *MeterTx) finish() error {
	if len(t.wrote) == 0 {
		return nil
	}
	if err := t.db.Exec(`UPDATE usage_cursors SET writes = writes + 1 WHERE environment_id = ?`, t.envID).Error; err != nil {
		return fmt.Errorf("count meter figure writes: %w", err)
	}
	return nil
}

// committed keeps what the committed transaction wrote in the figure cache.
func (t *MeterTx) committed() {
	t.fired.add(t.firing)
	if len(t.wrote) > 0 {
		t.cache.committed(t.envID, t.cursor.Writes, t.view, t.wrote)
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
func (t *MeterTx) Figures(meterID string, keys []FigureKey) ([]models.MeterFigure, error) {
	var out []models.MeterFigure
	var misses []FigureKey
	for _, k := range keys {
		id := idOf(meterID, k)
		if f, ok := t.wrote[id]; ok {
			out = append(out, f)
		} else if f, ok := t.view[id]; ok {
			out = append(out, f)
		} else {
			misses = append(misses, k)
		}
	}
	got, err := t.readFigures(meterID, misses)
	return append(out, got...), err
}

// readFigures is Figures from the database.
func (t *MeterTx) readFigures(meterID string, keys []FigureKey) ([]models.MeterFigure, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if t.dialect == "postgres" {
		return readFiguresPG(t.db, meterID, keys)
	}
	return readFiguresSQLite(t.db, meterID, keys)
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
func (t *MeterTx) SaveFigures(fs []models.MeterFigure) error {
	if len(fs) == 0 {
		return nil
	}
	if err := t.writeFigures(fs); err != nil {
		return err
	}
	if t.wrote == nil {
		t.wrote = make(map[figureID]models.MeterFigure, len(fs))
	}
	for _, f := range fs {
		t.wrote[idOf(f.MeterID, FigureKey{Kind: f.Kind, WindowStart: f.WindowStart, AccountID: f.AccountID, Groups: f.Groups})] = f
	}
	return nil
}

// writeFigures is SaveFigures' database write (fs not empty).
func (t *MeterTx) writeFigures(fs []models.MeterFigure) error {
	if t.dialect == "postgres" {
		return writeFiguresPG(t.db, fs)
	}
	return writeFiguresSQLite(t.db, fs)
}

// SeriesIDs numbers the series of meterID (meter_series), numbering the new ones: ids[i]
// is keys[i]'s.
func (t *MeterTx) SeriesIDs(meterID string, keys []SeriesKey) ([]int64, error) {
	accts, groups := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		accts[i], groups[i] = k.AccountID, k.Groups
	}
	return t.number(meterID, "meter_series", []string{"account_id", "groups"}, accts, groups)
}

// ValueIDs numbers the distinct values of meterID (meter_values) the same way.
func (t *MeterTx) ValueIDs(meterID string, values []string) ([]int64, error) {
	return t.number(meterID, "meter_values", []string{"value"}, values)
}

// number reads (and adds, for the missing ones) the ids of rows of table keyed by
// meter_id and cols, whose values are in vals (one slice per column, same length). Every
// writer of a meter's numbers (consumer transactions, backfill pages) holds the
// environment's usage cursor lock, so a key read missing is still missing when inserted
// (and the table's unique key would refuse a second number if it were not).
func (t *MeterTx) number(meterID, table string, cols []string, vals ...[]string) ([]int64, error) {
	if len(vals[0]) == 0 {
		return []int64{}, nil
	}
	if t.dialect == "postgres" {
		return numberPG(t.db, meterID, table, cols, vals...)
	}
	return numberSQLite(t.db, meterID, table, cols, vals...)
}

// MemberDays reads the kept days of the given distinct values on days in [from, to)
// (days since 1970-01-01 UTC).
func (t *MeterTx) MemberDays(keys []MemberKey, from, to int32) ([]models.MeterMemberDay, error) {
	if t.dialect == "postgres" {
		return memberDaysPG(t.db, keys, from, to)
	}
	return memberDaysSQLite(t.db, keys, from, to)
}

// SaveMemberDays writes member days, replacing the kept ones with the same key.
func (t *MeterTx) SaveMemberDays(ms []models.MeterMemberDay) error {
	if len(ms) == 0 {
		return nil
	}
	if t.dialect == "postgres" {
		return saveMemberDaysPG(t.db, ms)
	}
	return saveMemberDaysSQLite(t.db, ms)
}

// scanMemberDays is scanFigures for member days.
func scanMemberDays(rows *sql.Rows, err error) ([]models.MeterMemberDay, error) {
	return scanAll(rows, err, "meter member days", func(rows *sql.Rows, m *models.MeterMemberDay) error {
		return rows.Scan(&m.Series, &m.Member, &m.Day, &m.Minutes)
	})
}

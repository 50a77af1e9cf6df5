package store

import (
	"database/sql"
	"fmt"
	"strings"
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
}

// meterTx starts the meter work of tx, which holds envID's cursor.
func (s *Store) meterTx(tx *gorm.DB, envID string, cursor UsageCursor) *MeterTx {
	return &MeterTx{db: tx, dialect: s.dialect, envID: envID, cursor: cursor, cache: s.figures,
		view: s.figures.view(envID, cursor.Writes)}
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


// lookupChunk bounds the rows of one SQLite write statement (its parameter limit).
const lookupChunk = 500

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
		// One statement whatever the number of keys: arrays read as a table, each key
		// looked up through the primary key. LATERAL with LIMIT keeps it so: a plain join
		// (or a LATERAL the planner flattens into one), planned on a young table's
		// statistics, turned into a merge join comparing every key with every figure.
		n := len(keys)
		kinds, accts, starts, groups := make([]string, n), make([]string, n), make([]time.Time, n), make([]string, n)
		for i, k := range keys {
			kinds[i], accts[i], starts[i], groups[i] = k.Kind, k.AccountID, k.WindowStart, k.Groups
		}
		return scanFigures(t.db.Statement.ConnPool.QueryContext(t.db.Statement.Context, `SELECT `+figureColumns+` FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS k(kind, account_id, window_start, groups),
			LATERAL (SELECT * FROM meter_figures WHERE meter_id = $5 AND kind = k.kind AND account_id = k.account_id
				AND window_start = k.window_start AND groups = k.groups LIMIT 1) AS f`, kinds, accts, starts, groups, meterID))
	}
	var out []models.MeterFigure
	for _, k := range keys { // in process (SQLite), one indexed lookup each is cheap
		got, err := scanFigures(t.db.Raw(`SELECT `+figureColumns+` FROM meter_figures f WHERE meter_id = ? AND kind = ? AND account_id = ? AND window_start = ? AND groups = ?`,
			meterID, k.Kind, k.AccountID, k.WindowStart, k.Groups).Rows())
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// figureColumns are the columns scanFigures reads, of meter_figures as f.
const figureColumns = `f.meter_id, f.kind, f.window_start, f.account_id, f.groups, f.g1, f.g2, f.g3, f.value, f.slots, f.latest_ts, f.latest_seq, f.latest_id`

// scanFigures reads figureColumns by hand: reflection per row would cost more than the
// query. PostgreSQL's statements go straight to the connection, so that their arrays
// reach unnest whole (GORM would expand them into lists).
func scanFigures(rows *sql.Rows, err error) ([]models.MeterFigure, error) {
	if err != nil {
		return nil, fmt.Errorf("read meter figures: %w", err)
	}
	defer rows.Close()
	var out []models.MeterFigure
	for rows.Next() {
		var f models.MeterFigure
		if err := rows.Scan(&f.MeterID, &f.Kind, &f.WindowStart, &f.AccountID, &f.Groups, &f.G1, &f.G2, &f.G3,
			&f.Value, &f.Slots, &f.LatestTS, &f.LatestSeq, &f.LatestID); err != nil {
			return nil, fmt.Errorf("read meter figure: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
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

// writeFigures is SaveFigures' database write.
func (t *MeterTx) writeFigures(fs []models.MeterFigure) error {
	if t.dialect == "postgres" {
		n := len(fs)
		kinds, accts, groups, vals, slots, ids := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		starts, seqs := make([]time.Time, n), make([]int64, n)
		g1, g2, g3, lts := make([]*string, n), make([]*string, n), make([]*string, n), make([]*time.Time, n)
		for i := range fs {
			f := &fs[i]
			kinds[i], starts[i], accts[i], groups[i], vals[i], slots[i] = f.Kind, f.WindowStart, f.AccountID, f.Groups, f.Value, f.Slots
			g1[i], g2[i], g3[i], lts[i], seqs[i], ids[i] = f.G1, f.G2, f.G3, f.LatestTS, f.LatestSeq, f.LatestID
		}
		_, err := t.db.Statement.ConnPool.ExecContext(t.db.Statement.Context, `INSERT INTO meter_figures
			(meter_id, kind, window_start, account_id, groups, g1, g2, g3, value, slots, latest_ts, latest_seq, latest_id)
			SELECT $1, u.* FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
				$9::text[], $10::text[], $11::timestamptz[], $12::bigint[], $13::text[]) AS u
			ON CONFLICT (meter_id, kind, window_start, account_id, groups) DO UPDATE SET value = excluded.value,
				slots = excluded.slots, latest_ts = excluded.latest_ts, latest_seq = excluded.latest_seq, latest_id = excluded.latest_id`,
			fs[0].MeterID, kinds, starts, accts, groups, g1, g2, g3, vals, slots, lts, seqs, ids)
		if err != nil {
			return fmt.Errorf("write %d meter figures: %w", n, err)
		}
		return nil
	}
	return upsertChunks(t.db, fs, `INSERT INTO meter_figures
		(meter_id, kind, window_start, account_id, groups, g1, g2, g3, value, slots, latest_ts, latest_seq, latest_id)`,
		`ON CONFLICT (meter_id, kind, window_start, account_id, groups) DO UPDATE SET
		value = excluded.value, slots = excluded.slots, latest_ts = excluded.latest_ts, latest_seq = excluded.latest_seq,
		latest_id = excluded.latest_id`,
		func(f *models.MeterFigure) []any {
			return []any{f.MeterID, f.Kind, f.WindowStart, f.AccountID, f.Groups, f.G1, f.G2, f.G3,
				f.Value, f.Slots, f.LatestTS, f.LatestSeq, f.LatestID}
		})
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
	n := len(vals[0])
	ids := make([]int64, n)
	if n == 0 {
		return ids, nil
	}
	key := func(i int) (k [2]string) { // at most two columns
		for c := range vals {
			k[c] = vals[c][i]
		}
		return k
	}
	if t.dialect != "postgres" {
		where := "meter_id = ?"
		for _, c := range cols {
			where += " AND " + c + " = ?"
		}
		for i := range n {
			args := []any{meterID}
			for c := range vals {
				args = append(args, vals[c][i])
			}
			var got []int64
			if err := t.db.Raw("SELECT id FROM "+table+" WHERE "+where, args...).Scan(&got).Error; err != nil {
				return nil, fmt.Errorf("read %s: %w", table, err)
			}
			if len(got) == 0 {
				err := t.db.Raw("INSERT INTO "+table+" (meter_id, "+strings.Join(cols, ", ")+") VALUES "+placeholders(1, len(args))+" RETURNING id",
					args...).Scan(&got).Error
				if err != nil {
					return nil, fmt.Errorf("add %s: %w", table, err)
				}
				if len(got) == 0 {
					return nil, fmt.Errorf("add %s: no id returned", table)
				}
			}
			ids[i] = got[0]
		}
		return ids, nil
	}
	var unnest, match, names []string
	args := []any{meterID}
	for c, col := range cols {
		unnest = append(unnest, fmt.Sprintf("$%d::text[]", c+2))
		match = append(match, fmt.Sprintf("%s = k.c%d", col, c))
		names = append(names, fmt.Sprintf("c%d", c))
		args = append(args, vals[c])
	}
	rows, err := t.db.Statement.ConnPool.QueryContext(t.db.Statement.Context, `SELECT k.i, t.id
		FROM unnest(`+strings.Join(unnest, ", ")+`) WITH ORDINALITY AS k(`+strings.Join(names, ", ")+`, i),
		LATERAL (SELECT id FROM `+table+` WHERE meter_id = $1 AND `+strings.Join(match, " AND ")+` LIMIT 1) AS t`, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	found := 0
	for rows.Next() {
		var i, id int64
		if err := rows.Scan(&i, &id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		ids[i-1] = id
		found++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	if found == n {
		return ids, nil
	}
	missing := make([][]string, len(vals))
	seen := map[[2]string]bool{}
	for i := range n {
		if k := key(i); ids[i] == 0 && !seen[k] {
			seen[k] = true
			for c := range vals {
				missing[c] = append(missing[c], vals[c][i])
			}
		}
	}
	args = []any{meterID}
	for c := range missing {
		args = append(args, missing[c])
	}
	rows, err = t.db.Statement.ConnPool.QueryContext(t.db.Statement.Context, `INSERT INTO `+table+` (meter_id, `+strings.Join(cols, ", ")+`)
		SELECT $1, k.* FROM unnest(`+strings.Join(unnest, ", ")+`) AS k RETURNING id, `+strings.Join(cols, ", "), args...)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", table, err)
	}
	defer rows.Close()
	added := map[[2]string]int64{}
	for rows.Next() {
		var id int64
		var got [2]string
		dest := []any{&id}
		for c := range cols {
			dest = append(dest, &got[c])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("add %s: %w", table, err)
		}
		added[got] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("add %s: %w", table, err)
	}
	for i := range n {
		if ids[i] == 0 {
			ids[i] = added[key(i)]
		}
	}
	return ids, nil
}

// MemberDays reads the kept days of the given distinct values on days in [from, to)
// (days since 1970-01-01 UTC).
func (t *MeterTx) MemberDays(keys []MemberKey, from, to int32) ([]models.MeterMemberDay, error) {
	if t.dialect == "postgres" {
		series, members := make([]int64, len(keys)), make([]int64, len(keys))
		for i, k := range keys {
			series[i], members[i] = k.Series, k.Member
		}
		return scanMemberDays(t.db.Statement.ConnPool.QueryContext(t.db.Statement.Context, `SELECT m.series, m.member, m.day, m.minutes
			FROM unnest($1::bigint[], $2::bigint[]) AS k(series, member),
			LATERAL (SELECT * FROM meter_member_days WHERE series = k.series AND member = k.member
				AND day >= $3 AND day < $4 OFFSET 0) AS m`, series, members, from, to))
	}
	var out []models.MeterMemberDay
	for _, k := range keys {
		got, err := scanMemberDays(t.db.Raw(`SELECT series, member, day, minutes FROM meter_member_days
			WHERE series = ? AND member = ? AND day >= ? AND day < ?`, k.Series, k.Member, from, to).Rows())
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// SaveMemberDays writes member days, replacing the kept ones with the same key.
func (t *MeterTx) SaveMemberDays(ms []models.MeterMemberDay) error {
	if t.dialect == "postgres" && len(ms) > 0 {
		n := len(ms)
		series, members, days, minutes := make([]int64, n), make([]int64, n), make([]int32, n), make([]string, n)
		for i := range ms {
			series[i], members[i], days[i], minutes[i] = ms[i].Series, ms[i].Member, ms[i].Day, ms[i].Minutes
		}
		_, err := t.db.Statement.ConnPool.ExecContext(t.db.Statement.Context, `INSERT INTO meter_member_days (series, member, day, minutes)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[])
			ON CONFLICT (series, member, day) DO UPDATE SET minutes = excluded.minutes`, series, members, days, minutes)
		if err != nil {
			return fmt.Errorf("write %d meter member days: %w", n, err)
		}
		return nil
	}
	return upsertChunks(t.db, ms, `INSERT INTO meter_member_days (series, member, day, minutes)`,
		`ON CONFLICT (series, member, day) DO UPDATE SET minutes = excluded.minutes`,
		func(m *models.MeterMemberDay) []any { return []any{m.Series, m.Member, m.Day, m.Minutes} })
}

// upsertChunks writes rows with insert, one VALUES list of at most lookupChunk rows per
// statement (SQLite bounds a statement's parameters), and conflict after it.
func upsertChunks[T any](db *gorm.DB, rows []T, insert, conflict string, args func(*T) []any) error {
	for start := 0; start < len(rows); start += lookupChunk {
		part := rows[start:min(start+lookupChunk, len(rows))]
		var all []any
		cols := 0
		for i := range part {
			a := args(&part[i])
			cols = len(a)
			all = append(all, a...)
		}
		if err := db.Exec(insert+" VALUES "+placeholders(len(part), cols)+" "+conflict, all...).Error; err != nil {
			return fmt.Errorf("write %d rows: %w", len(part), err)
		}
	}
	return nil
}

// scanMemberDays is scanFigures for member days.
func scanMemberDays(rows *sql.Rows, err error) ([]models.MeterMemberDay, error) {
	if err != nil {
		return nil, fmt.Errorf("read meter member days: %w", err)
	}
	defer rows.Close()
	var out []models.MeterMemberDay
	for rows.Next() {
		var m models.MeterMemberDay
		if err := rows.Scan(&m.Series, &m.Member, &m.Day, &m.Minutes); err != nil {
			return nil, fmt.Errorf("read meter member day: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

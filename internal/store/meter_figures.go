package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
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
	cursor  usageCursor
	cache   *figureCache
	view    map[figureID]models.MeterFigure // the cache as of cursor.Writes (nil: none)
	wrote   map[figureID]models.MeterFigure // figures this transaction wrote
}

// meterTx starts the meter work of tx, which holds envID's cursor.
func (s *Store) meterTx(tx *gorm.DB, envID string, cursor usageCursor) *MeterTx {
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

// MeterApply counts rows (of batches nobody counted into these meters yet) into meters.
type MeterApply func(tx *MeterTx, meters []models.Meter, rows []UsageRow) error

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

// waitingBatch is a batch the consumer or a backfill may take.
type waitingBatch struct {
	Seq          int64
	MetricsCount int
}

// takeRows keeps the batches, in order, up to maxRows rows (at least one batch).
func takeRows(bs []waitingBatch, maxRows int) []int64 {
	var seqs []int64
	rows := 0
	for _, b := range bs {
		if len(seqs) > 0 && rows+b.MetricsCount > maxRows {
			break
		}
		seqs, rows = append(seqs, b.Seq), rows+b.MetricsCount
	}
	return seqs
}

// meterRows reads the rows of the environment's batches seqs that one of meters counts.
// The statement names the batches only, not the environment (a batch seq is one
// environment's already): with environment_id in it, a planner working from a young
// table's statistics scanned the environment's rows by time once per batch, 50 s for
// 100,000 rows instead of 0.1 s. usage_events_batch is the one index it can use.
func (s *Store) meterRows(tx *gorm.DB, seqs []int64, meters []models.Meter) ([]UsageRow, error) {
	var names []string
	for _, m := range meters {
		if !slices.Contains(names, m.FilterMetricName) {
			names = append(names, m.FilterMetricName)
		}
	}
	var rows []UsageRow
	var err error
	if s.dialect == "postgres" {
		rows, err = scanUsageRows(tx.Statement.ConnPool.QueryContext(tx.Statement.Context, `SELECT `+usageRowColumns+`
			FROM unnest($1::bigint[]) AS b(seq), LATERAL (SELECT * FROM usage_events
				WHERE batch_seq = b.seq AND metric_name = ANY($2::text[]) OFFSET 0) AS e`, seqs, names))
	} else {
		rows, err = scanUsageRows(tx.Raw(`SELECT `+usageRowColumns+`
			FROM usage_events e WHERE batch_seq IN ? AND metric_name IN ?`, seqs, names).Rows())
	}
	if err != nil {
		return nil, fmt.Errorf("read usage rows of %d batches: %w", len(seqs), err)
	}
	return rows, nil
}

// WaitingUsageEnvironments lists environments with batches the consumer has not taken,
// the one waiting longest first (served by usage_batches_waiting, which holds only them).
func (s *Store) WaitingUsageEnvironments(ctx context.Context, limit int) ([]string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Raw(`SELECT environment_id FROM usage_batches WHERE gen IS NULL
		GROUP BY environment_id ORDER BY MIN(seq) LIMIT ?`, limit).
		Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("environments with waiting usage: %w", err)
	}
	return ids, nil
}

// ConsumeUsage takes the environment's waiting batches (oldest first, about maxRows rows)
// and, in one transaction under its usage cursor lock, counts their rows into every meter
// of the environment (apply) and stamps them with the next generation. It says how many
// batches it took: 0 when none waits or another consumer holds the environment.
func (s *Store) ConsumeUsage(ctx context.Context, envID string, maxRows int, apply MeterApply) (int, error) {
	var took int
	var mt *MeterTx
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cursor, err := s.lockCursor(tx, envID, true)
		if err != nil || cursor.Gen < 0 {
			return err
		}
		mt = s.meterTx(tx, envID, cursor)
		if took, err = s.consumeLocked(mt, maxRows, apply); err != nil {
			return err
		}
		return mt.finish()
	})
	if err == nil && mt != nil {
		mt.committed()
	}
	return took, err
}

// consumeLocked is ConsumeUsage's work in mt, whose transaction holds the environment's
// usage cursor.
func (s *Store) consumeLocked(mt *MeterTx, maxRows int, apply MeterApply) (int, error) {
	tx, envID := mt.db, mt.envID
	var waiting []waitingBatch
	if err := tx.Raw(`SELECT seq, metrics_count FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY seq LIMIT 1000`,
		envID).Scan(&waiting).Error; err != nil {
		return 0, fmt.Errorf("waiting usage batches: %w", err)
	}
	if len(waiting) == 0 {
		return 0, nil
	}
	seqs := takeRows(waiting, maxRows)
	var meters []models.Meter
	if err := tx.Where("environment_id = ?", envID).Find(&meters).Error; err != nil {
		return 0, fmt.Errorf("meters: %w", err)
	}
	if len(meters) > 0 {
		rows, err := s.meterRows(tx, seqs, meters)
		if err != nil {
			return 0, err
		}
		if err := apply(mt, meters, rows); err != nil {
			return 0, err
		}
	}
	gen := mt.cursor.Gen + 1
	if err := tx.Exec(`UPDATE usage_cursors SET gen = ? WHERE environment_id = ?`, gen, envID).Error; err != nil {
		return 0, fmt.Errorf("advance usage cursor: %w", err)
	}
	if err := tx.Exec(`UPDATE usage_batches SET gen = ? WHERE seq IN ?`, gen, seqs).Error; err != nil {
		return 0, fmt.Errorf("stamp usage batches: %w", err)
	}
	return len(seqs), nil
}

// BackfillMeterPage counts the meter's next page of backfill batches (about maxRows
// rows, in seq order) into it and advances its progress, in one transaction under the
// environment's usage cursor lock; with none left it marks the meter ready. A page that
// fails or whose worker dies commits nothing, so running it again counts each row once.
// done is true once the meter is ready; a deleted meter is apperr.ErrNotFound.
func (s *Store) BackfillMeterPage(ctx context.Context, meterID string, maxRows int, now time.Time, apply MeterApply) (done bool, rows int, err error) {
	var mt *MeterTx
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var m models.Meter
		if err := tx.Where("id = ?", meterID).Take(&m).Error; err != nil {
			return notFound(err, "meter "+meterID)
		}
		cursor, err := s.lockCursor(tx, m.EnvironmentID, false)
		if err != nil {
			return err
		}
		if err := tx.Where("id = ?", meterID).Take(&m).Error; err != nil { // as of the lock
			return notFound(err, "meter "+meterID)
		}
		if m.Status == models.MeterReady {
			done = true
			return nil
		}
		mt = s.meterTx(tx, m.EnvironmentID, cursor)
		if done, rows, err = s.backfillLocked(mt, m, maxRows, now, apply); err != nil {
			return err
		}
		return mt.finish()
	})
	if err == nil && mt != nil {
		mt.committed()
	}
	return done, rows, err
}

// backfillLocked is BackfillMeterPage's work in mt, whose transaction holds the meter's
// environment's usage cursor.
func (s *Store) backfillLocked(mt *MeterTx, m models.Meter, maxRows int, now time.Time, apply MeterApply) (done bool, rows int, err error) {
	tx := mt.db
	// Pages wait for the lock where the consumer skips it: back-to-back pages of
	// several backfills would keep it from the consumer, and as_of would stand still
	// for every meter of the environment. So a page also does the consumer's work.
	if _, err := s.consumeLocked(mt, maxRows, apply); err != nil {
		return false, 0, err
	}
	var batches []waitingBatch
	if err := tx.Raw(`SELECT seq, metrics_count FROM usage_batches
		WHERE environment_id = ? AND seq > ? AND gen IS NOT NULL AND gen <= ? ORDER BY seq LIMIT 1000`,
		m.EnvironmentID, m.BackfillSeq, m.BackfillGen).Scan(&batches).Error; err != nil {
		return false, 0, fmt.Errorf("backfill batches: %w", err)
	}
	if len(batches) == 0 {
		return true, 0, tx.Exec(`UPDATE meters SET status = ?, updated_at = ? WHERE id = ?`,
			models.MeterReady, now.UTC().Truncate(time.Microsecond), m.ID).Error
	}
	seqs := takeRows(batches, maxRows)
	got, err := s.meterRows(tx, seqs, []models.Meter{m})
	if err != nil {
		return false, 0, err
	}
	if err := apply(mt, []models.Meter{m}, got); err != nil {
		return false, 0, err
	}
	// Progress only: updated_at says when the meter's object last changed (ready).
	return false, len(got), tx.Exec(`UPDATE meters SET backfill_seq = ? WHERE id = ?`, seqs[len(seqs)-1], m.ID).Error
}

// MeterAsOf is the time before which every accepted usage row is counted in m's figures
// (CONTRACT §18): the receipt time of the oldest batch the consumer has not taken, or of
// the oldest batch m's backfill has not counted, or now when there is none.
func (s *Store) MeterAsOf(ctx context.Context, m models.Meter, now time.Time) (time.Time, error) {
	asOf := now.UTC()
	var oldest []time.Time
	if err := s.db.WithContext(ctx).Raw(`SELECT received_at FROM usage_batches WHERE environment_id = ? AND gen IS NULL ORDER BY received_at LIMIT 1`,
		m.EnvironmentID).Scan(&oldest).Error; err != nil {
		return asOf, fmt.Errorf("oldest waiting usage batch: %w", err)
	}
	if m.Status == models.MeterBackfilling {
		var first []time.Time
		if err := s.db.WithContext(ctx).Raw(`SELECT received_at FROM usage_batches
			WHERE environment_id = ? AND seq > ? AND gen IS NOT NULL AND gen <= ? ORDER BY received_at LIMIT 1`,
			m.EnvironmentID, m.BackfillSeq, m.BackfillGen).Scan(&first).Error; err != nil {
			return asOf, fmt.Errorf("oldest batch to backfill: %w", err)
		}
		oldest = append(oldest, first...)
	}
	for _, t := range oldest {
		if !t.IsZero() && t.Before(asOf) {
			asOf = t.UTC()
		}
	}
	return asOf, nil
}

// FigureQuery selects kept figures of one meter and kind: window starts in [From, To),
// one account or all, and group values (index into the meter's group_by → canonical text).
type FigureQuery struct {
	MeterID   string
	Kind      string
	From, To  time.Time
	AccountID string
	Filters   map[int]string
	Limit     int // at most this many figures; 0 = all
	// After, when set, keeps the figures after it in the order figures come in: window
	// start, then account and group compared bytewise (as Go compares strings).
	After *FigureKey
}

// MeterFigures reads the figures q selects, ordered by window start, account and group.
func (s *Store) MeterFigures(ctx context.Context, q FigureQuery) (_ []models.MeterFigure, err error) {
	ctx, end := s.span(ctx, "db meter figures")
	defer end(&err)
	db := s.db.WithContext(ctx).Table("meter_figures AS f").Select(figureColumns).
		Where("meter_id = ? AND kind = ? AND window_start >= ? AND window_start < ?", q.MeterID, q.Kind, q.From, q.To)
	if q.AccountID != "" {
		db = db.Where("account_id = ?", q.AccountID)
	}
	for i, v := range q.Filters {
		db = db.Where(fmt.Sprintf("g%d = ?", i+1), v)
	}
	// Bytewise, so that SQL's order and Go's agree: PostgreSQL's default collation orders
	// text by language rules; SQLite's BINARY is bytewise already.
	collate := ""
	if s.dialect == "postgres" {
		collate = ` COLLATE "C"`
	}
	if a := q.After; a != nil {
		db = db.Where("window_start > ? OR (window_start = ? AND (account_id"+collate+" > ? OR (account_id = ? AND groups"+collate+" > ?)))",
			a.WindowStart, a.WindowStart, a.AccountID, a.AccountID, a.Groups)
	}
	if q.Limit > 0 {
		db = db.Limit(q.Limit)
	}
	return scanFigures(db.Order("window_start, account_id" + collate + ", groups" + collate).Rows())
}

// MeterRows reads every stored usage row of an environment with the given metric name:
// the raw rows tests and operators recompute a meter's figures from (meters.Reference).
func (s *Store) MeterRows(ctx context.Context, envID, metricName string) ([]UsageRow, error) {
	rows, err := scanUsageRows(s.db.WithContext(ctx).Raw(`SELECT `+usageRowColumns+`
		FROM usage_events e WHERE environment_id = ? AND metric_name = ?`, envID, metricName).Rows())
	if err != nil {
		return nil, fmt.Errorf("usage rows of %s: %w", metricName, err)
	}
	return rows, nil
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

// usageRowColumns are the columns scanUsageRows reads.
const usageRowColumns = `e.id, e.batch_seq, e.account_id, e.product, e.metric_name, e.metric_value, e.metadata, e.timestamp`

// scanUsageRows reads usage rows by hand (the consumer reads tens of thousands at once).
// metric_value is read as text: exact on PostgreSQL (NUMERIC); SQLite's NUMERIC affinity
// stores what it can as an integer or a float, so it keeps 15–17 significant digits
// (docs/meters.md).
func scanUsageRows(rows *sql.Rows, err error) ([]UsageRow, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UsageRow
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(&r.ID, &r.BatchSeq, &r.AccountID, &r.Product, &r.MetricName, &r.MetricValue, &r.Metadata, &r.Timestamp); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

package store

import (
	"database/sql"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// The SQLite statements of meter work (a Tx holding the usage cursor), each db the transaction's;
// their PostgreSQL counterparts are in meter_sql_pg.go. SQLite runs in process: one
// indexed lookup per key is cheap, and a statement's parameters are bounded, so writes go
// in chunks.

// lockCursorSQLite is lockCursor's read of the cursor row on SQLite: its write
// transaction is exclusive, so there is nothing to lock.
const lockCursorSQLite = lockCursorSQL

// readFiguresSQLite is readFigures on SQLite.
func readFiguresSQLite(db *gorm.DB, meterID string, keys []FigureKey) ([]models.MeterFigure, error) {
	var out []models.MeterFigure
	for _, k := range keys { // in process (SQLite), one indexed lookup each is cheap
		got, err := scanFigures(db.Raw(`SELECT `+figureColumns+` FROM meter_figures f WHERE meter_id = ? AND kind = ? AND account_id = ? AND window_start = ? AND groups = ?`,
			meterID, k.Kind, k.AccountID, k.WindowStart, k.Groups).Rows())
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// writeFiguresSQLite is writeFigures on SQLite.
func writeFiguresSQLite(db *gorm.DB, fs []models.MeterFigure) error {
	return upsertChunks(db, fs, `INSERT INTO meter_figures
		(meter_id, kind, window_start, account_id, groups, g1, g2, g3, value, slots, latest_ts, latest_seq, latest_id)`,
		`ON CONFLICT (meter_id, kind, window_start, account_id, groups) DO UPDATE SET
		value = excluded.value, slots = excluded.slots, latest_ts = excluded.latest_ts, latest_seq = excluded.latest_seq,
		latest_id = excluded.latest_id`,
		func(f *models.MeterFigure) []any {
			return []any{f.MeterID, f.Kind, f.WindowStart, f.AccountID, f.Groups, f.G1, f.G2, f.G3,
				f.Value, f.Slots, f.LatestTS, f.LatestSeq, f.LatestID}
		})
}

// numberSQLite is number on SQLite: each key read, and added when missing, on its own.
func numberSQLite(db *gorm.DB, meterID, table string, cols []string, vals ...[]string) ([]int64, error) {
	n := len(vals[0])
	ids := make([]int64, n)
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
		if err := db.Raw("SELECT id FROM "+table+" WHERE "+where, args...).Scan(&got).Error; err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		if len(got) == 0 {
			err := db.Raw("INSERT INTO "+table+" (meter_id, "+strings.Join(cols, ", ")+") VALUES "+placeholders(1, len(args))+" RETURNING id",
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

// memberDaysSQLite is MemberDays on SQLite.
func memberDaysSQLite(db *gorm.DB, keys []MemberKey, from, to int32) ([]models.MeterMemberDay, error) {
	var out []models.MeterMemberDay
	for _, k := range keys {
		got, err := scanMemberDays(db.Raw(`SELECT series, member, day, minutes FROM meter_member_days
			WHERE series = ? AND member = ? AND day >= ? AND day < ?`, k.Series, k.Member, from, to).Rows())
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// saveMemberDaysSQLite is SaveMemberDays on SQLite.
func saveMemberDaysSQLite(db *gorm.DB, ms []models.MeterMemberDay) error {
	return upsertChunks(db, ms, `INSERT INTO meter_member_days (series, member, day, minutes)`,
		`ON CONFLICT (series, member, day) DO UPDATE SET minutes = excluded.minutes`,
		func(m *models.MeterMemberDay) []any { return []any{m.Series, m.Member, m.Day, m.Minutes} })
}

// usageRowsSQLite is UsageRows' statement on SQLite; limit is -1 for none.
func usageRowsSQLite(db *gorm.DB, q RowQuery, limit int) (*sql.Rows, error) {
	meta := `e.metadata`
	if len(q.Keys) == 0 {
		meta = `'{}'`
	}
	return db.Raw(`SELECT e.id, e.batch_seq, e.account_id, e.product, e.metric_name, e.metric_value, `+meta+`, e.timestamp
		FROM usage_events e WHERE batch_seq IN ? AND metric_name IN ? AND (batch_seq <> ? OR id > ?)
		ORDER BY batch_seq, id LIMIT ?`, q.Batches, q.MetricNames, q.Batches[0], q.AfterID, limit).Rows()
}

// figureOrderSQLite is MeterFigures' key on SQLite, whose BINARY collation is bytewise
// already.
const figureOrderSQLite = `(window_start, account_id, groups)`

// lookupChunk bounds the rows of one SQLite write statement (its parameter limit).
const lookupChunk = 500

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

package store

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// The PostgreSQL statements of meter work (a Tx holding the usage cursor), each db the transaction's;
// their SQLite counterparts are in meter_sql_sqlite.go. Statements with arrays go
// straight to the connection, so that the arrays reach unnest whole (GORM would expand
// them into lists).

// lockCursorPG is lockCursor's read of the cursor row on PostgreSQL: locked until the
// transaction ends, or skipped when another holds it and lock is SkipBusy.
func lockCursorPG(lock CursorLock) string {
	q := lockCursorSQL + " FOR UPDATE"
	if lock == SkipBusy {
		q += " SKIP LOCKED"
	}
	return q
}

// readFiguresPG is readFigures on PostgreSQL.
func readFiguresPG(db *gorm.DB, meterID string, keys []FigureKey) ([]models.MeterFigure, error) {
	// One statement whatever the number of keys: arrays read as a table, each key
	// looked up through the primary key. LATERAL with LIMIT keeps it so: a plain join
	// (or a LATERAL the planner flattens into one), planned on a young table's
	// statistics, turned into a merge join comparing every key with every figure.
	n := len(keys)
	kinds, accts, starts, groups := make([]string, n), make([]string, n), make([]time.Time, n), make([]string, n)
	for i, k := range keys {
		kinds[i], accts[i], starts[i], groups[i] = k.Kind, k.AccountID, k.WindowStart, k.Groups
	}
	return scanFigures(db.Statement.ConnPool.QueryContext(db.Statement.Context, `SELECT `+figureColumns+` FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS k(kind, account_id, window_start, groups),
		LATERAL (SELECT * FROM meter_figures WHERE meter_id = $5 AND kind = k.kind AND account_id = k.account_id
			AND window_start = k.window_start AND groups = k.groups LIMIT 1) AS f`, kinds, accts, starts, groups, meterID))
}

// writeFiguresPG is writeFigures on PostgreSQL: one statement, one array per column.
func writeFiguresPG(db *gorm.DB, fs []models.MeterFigure) error {
	n := len(fs)
	kinds, accts, groups, vals, slots, ids := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	starts, seqs := make([]time.Time, n), make([]int64, n)
	g1, g2, g3, lts := make([]*string, n), make([]*string, n), make([]*string, n), make([]*time.Time, n)
	for i := range fs {
		f := &fs[i]
		kinds[i], starts[i], accts[i], groups[i], vals[i], slots[i] = f.Kind, f.WindowStart, f.AccountID, f.Groups, f.Value, f.Slots
		g1[i], g2[i], g3[i], lts[i], seqs[i], ids[i] = f.G1, f.G2, f.G3, f.LatestTS, f.LatestSeq, f.LatestID
	}
	_, err := db.Statement.ConnPool.ExecContext(db.Statement.Context, `INSERT INTO meter_figures
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

// numberPG is number on PostgreSQL: one statement reads the numbers of every key, a
// second adds the missing ones (each distinct key once).
func numberPG(db *gorm.DB, meterID, table string, cols []string, vals ...[]string) ([]int64, error) {
	n := len(vals[0])
	ids := make([]int64, n)
	key := func(i int) (k [2]string) { // at most two columns
		for c := range vals {
			k[c] = vals[c][i]
		}
		return k
	}
	var unnest, match, names []string
	args := []any{meterID}
	for c, col := range cols {
		unnest = append(unnest, fmt.Sprintf("$%d::text[]", c+2))
		match = append(match, fmt.Sprintf("%s = k.c%d", col, c))
		names = append(names, fmt.Sprintf("c%d", c))
		args = append(args, vals[c])
	}
	rows, err := db.Statement.ConnPool.QueryContext(db.Statement.Context, `SELECT k.i, t.id
		FROM unnest(`+strings.Join(unnest, ", ")+`) WITH ORDINALITY AS k(`+strings.Join(names, ", ")+`, i),
		LATERAL (SELECT id FROM `+table+` WHERE meter_id = $1 AND `+strings.Join(match, " AND ")+` LIMIT 1) AS t`, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	found, err := scanFound(rows, ids)
	if err != nil {
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
	rows, err = db.Statement.ConnPool.QueryContext(db.Statement.Context, `INSERT INTO `+table+` (meter_id, `+strings.Join(cols, ", ")+`)
		SELECT $1, k.* FROM unnest(`+strings.Join(unnest, ", ")+`) AS k RETURNING id, `+strings.Join(cols, ", "), args...)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", table, err)
	}
	added, err := scanAdded(rows, len(cols))
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", table, err)
	}
	for i := range n {
		if ids[i] == 0 {
			ids[i] = added[key(i)]
		}
	}
	return ids, nil
}

// scanFound reads numberPG's (ordinality, id) rows into ids, and closes them: it returns
// how many keys have an id.
func scanFound(rows *sql.Rows, ids []int64) (int, error) {
	defer rows.Close()
	found := 0
	for rows.Next() {
		var i, id int64
		if err := rows.Scan(&i, &id); err != nil {
			return 0, err
		}
		ids[i-1] = id
		found++
	}
	return found, rows.Err()
}

// scanAdded reads numberPG's (id, key columns) rows of the keys it added, and closes
// them.
func scanAdded(rows *sql.Rows, cols int) (map[[2]string]int64, error) {
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
			return nil, err
		}
		added[got] = id
	}
	return added, rows.Err()
}

// memberDaysPG is MemberDays on PostgreSQL.
func memberDaysPG(db *gorm.DB, keys []MemberKey, from, to int32) ([]models.MeterMemberDay, error) {
	series, members := make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		series[i], members[i] = k.Series, k.Member
	}
	return scanMemberDays(db.Statement.ConnPool.QueryContext(db.Statement.Context, `SELECT m.series, m.member, m.day, m.minutes
		FROM unnest($1::bigint[], $2::bigint[]) AS k(series, member),
		LATERAL (SELECT * FROM meter_member_days WHERE series = k.series AND member = k.member
			AND day >= $3 AND day < $4 OFFSET 0) AS m`, series, members, from, to))
}

// saveMemberDaysPG is SaveMemberDays on PostgreSQL (ms not empty).
func saveMemberDaysPG(db *gorm.DB, ms []models.MeterMemberDay) error {
	n := len(ms)
	series, members, days, minutes := make([]int64, n), make([]int64, n), make([]int32, n), make([]string, n)
	for i := range ms {
		series[i], members[i], days[i], minutes[i] = ms[i].Series, ms[i].Member, ms[i].Day, ms[i].Minutes
	}
	_, err := db.Statement.ConnPool.ExecContext(db.Statement.Context, `INSERT INTO meter_member_days (series, member, day, minutes)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::text[])
		ON CONFLICT (series, member, day) DO UPDATE SET minutes = excluded.minutes`, series, members, days, minutes)
	if err != nil {
		return fmt.Errorf("write %d meter member days: %w", n, err)
	}
	return nil
}

// usageRowsPG is UsageRows' statement on PostgreSQL; limit is -1 for none.
func usageRowsPG(db *gorm.DB, q RowQuery, limit int) (*sql.Rows, error) {
	meta := `'{}'::jsonb`
	args := []any{q.Batches, q.MetricNames, q.AfterID, nullLimit(limit)}
	if len(q.Keys) > 0 {
		args = append(args, q.Keys)
		// Only the keys, and only values that can be a dimension: a string of at most
		// 255 characters (1,020 bytes), a number or a boolean (CONTRACT §18).
		meta = `(SELECT COALESCE(jsonb_object_agg(k, e.metadata -> k), '{}'::jsonb) FROM unnest($5::text[]) AS k
			WHERE jsonb_typeof(e.metadata -> k) IN ('string', 'number', 'boolean') AND octet_length(e.metadata ->> k) <= 1020)`
	}
	// The statement names the batches only, not the environment (a batch seq is one
	// environment's already): with environment_id in it, a planner working from a
	// young table's statistics scanned the environment's rows by time once per
	// batch. usage_events_batch is the one index it can use.
	return db.Statement.ConnPool.QueryContext(db.Statement.Context, `SELECT e.id, e.batch_seq, e.account_id, e.product,
		e.metric_name, e.metric_value::text, `+meta+`::text, e.timestamp
		FROM unnest($1::bigint[]) AS b(seq), LATERAL (SELECT * FROM usage_events
			WHERE batch_seq = b.seq AND metric_name = ANY($2::text[]) AND (b.seq <> ($1::bigint[])[1] OR id COLLATE "C" > $3) OFFSET 0) AS e
		ORDER BY e.batch_seq, e.id COLLATE "C" LIMIT $4`, args...)
}

// nullLimit is LIMIT's argument on PostgreSQL: NULL for none.
func nullLimit(n int) any {
	if n < 0 {
		return nil
	}
	return n
}

// figureOrderPG is MeterFigures' key on PostgreSQL: its text columns collated "C", as
// are those of meter_figures_order and meter_figures_g* (migration 92), so that the
// order is bytewise and the row comparison an index condition.
const figureOrderPG = `(window_start, account_id COLLATE "C", groups COLLATE "C")`

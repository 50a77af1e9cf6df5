package meters

import (
	"slices"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// A step is one transaction of meter work under an environment's usage cursor: the
// consumer's turn, or a backfill page. Each is bounded by a budget (CONTRACT §21), so
// that no input — a thousand batches of 1 MiB, 32 meters grouped by a key with a value
// per row — makes one transaction large enough to stall the others or to fail again and
// again: rows × meters, bytes read, and (through the consumer's adaptive rows, see
// adapt in consume.go) time.

// Budget bounds one step.
type Budget struct {
	// RowMeters bounds rows read × meters counting them: the figures a step combines.
	RowMeters int
	// Bytes bounds the bytes of usage rows a step reads (metadata only for the keys its
	// meters use).
	Bytes int
	// AlertEvents is the environment's cap of meter-threshold-crossed events per hour
	// (REVOPS_ALERT_EVENTS_PER_HOUR, CONTRACT §24) the step's firings count against; 0 is
	// DefaultAlertEventsPerHour.
	AlertEvents int
}

// Budgets of a step. A consumer turn starts at DefaultBudget (a full batch of 1,000
// rows fits for up to 25 meters) and adapts to its time (adapt): a turn's cost is mostly
// the figures it writes, which low-cardinality meters fold into a few rows per hour and
// day, so such an environment's turns grow to maxRowMeters (tens of thousands of rows,
// as many figure writes saved), while one grouped by a key with a value per row shrinks
// towards minRowMeters. Bytes bound what a turn reads whatever its rows.
const (
	maxRowMeters = 400_000
	minRowMeters = 2_000
	stepBytes    = 4 << 20
	// stepBatches bounds the batches one step lists.
	stepBatches = 1000
)

// DefaultBudget is a step's budget before the consumer adapts it to its turn time.
var DefaultBudget = Budget{RowMeters: 25_000, Bytes: stepBytes}

// rowsFor is how many rows a step may read for n meters.
func (b Budget) rowsFor(n int) int {
	return max(1, b.RowMeters/max(1, n))
}

// consumeStep takes the environment's waiting batches within b, counts their rows into
// every meter of the environment and stamps the batches it finished. A batch larger
// than the budget is applied in parts: the cursor keeps the last row counted, and the
// next step continues it (alone) from there. It returns the rows it read and whether
// batches are left waiting.
func consumeStep(tx *store.Tx, b Budget) (rows int, more bool, err error) {
	meters, err := tx.Meters()
	if err != nil {
		return 0, false, err
	}
	cur := tx.UsageCursor()
	var batches []store.Batch
	if cur.PartSeq != 0 {
		part, err := tx.Batch(cur.PartSeq)
		if err != nil {
			return 0, false, err
		}
		batches = []store.Batch{part}
	} else {
		// A batch holds at least one row: no more batches than rows can be taken.
		limit := stepBatches
		if len(meters) > 0 {
			limit = min(limit, b.rowsFor(len(meters)))
		}
		if batches, err = tx.WaitingBatches(limit); err != nil {
			return 0, false, err
		}
		more = len(batches) == limit
	}
	if len(batches) == 0 {
		return 0, false, nil
	}
	more = more || cur.PartSeq != 0
	if len(meters) == 0 { // nothing to count: take them all
		return 0, more, tx.Advance(seqsOf(batches), 0, "")
	}
	maxRows := b.rowsFor(len(meters))
	seqs := takeRows(batches, maxRows)
	more = more || len(seqs) < len(batches)
	got, cut, err := tx.UsageRows(rowQuery(meters, seqs, cur.PartAfter, maxRows), b.Bytes)
	if err != nil {
		return 0, false, err
	}
	if err := apply(tx, meters, got); err != nil {
		return 0, false, err
	}
	done, partSeq, partAfter := seqs, int64(0), ""
	if cut {
		// The last row read ends a part of its batch: that batch stays waiting, and so
		// do the ones after it (not read at all).
		last := got[len(got)-1]
		i := slices.Index(seqs, last.BatchSeq)
		done, partSeq, partAfter = seqs[:i], last.BatchSeq, last.ID
		more = true
	}
	return len(got), more, tx.Advance(done, partSeq, partAfter)
}

// backfillStep counts the next page of m's rows accepted before it: first the part of a
// batch the consumer had counted in parts when m was created, then its batches in seq
// order, whole batches within the budget's rows and bytes (at least one batch). It records the progress and the receipt time of the oldest batch left (the
// meter's as_of, §18), or marks m ready when none is left.
func backfillStep(tx *store.Tx, m models.Meter, b Budget) (rows int, done bool, err error) {
	if m.BackfillPartSeq != 0 {
		got, _, err := tx.UsageRows(store.RowQuery{Batches: []int64{m.BackfillPartSeq}, MetricNames: []string{m.FilterMetricName},
			Keys: keysOf([]models.Meter{m})}, 0)
		if err != nil {
			return 0, false, err
		}
		var part []store.UsageRow
		for _, r := range got { // the rows counted without m: up to its part's last id
			if r.ID <= m.BackfillPartAfter {
				part = append(part, r)
			}
		}
		if err := apply(tx, []models.Meter{m}, part); err != nil {
			return 0, false, err
		}
		m.BackfillPartSeq, m.BackfillPartAfter = 0, ""
		return len(part), false, saveBackfill(tx, m, m.BackfillSeq)
	}
	batches, err := tx.BackfillBatches(m, stepBatches)
	if err != nil {
		return 0, false, err
	}
	if len(batches) == 0 {
		return 0, true, nil
	}
	seqs := takeRows(batches, b.rowsFor(1))
	got, cut, err := tx.UsageRows(rowQuery([]models.Meter{m}, seqs, "", 0), b.Bytes)
	if err != nil {
		return 0, false, err
	}
	if cut {
		// Past the byte bound: the page ends with the last whole batch read. A first
		// batch alone past it is read whole (a batch is at most 1,000 rows of a 1 MiB
		// request), so every page makes progress.
		i := slices.Index(seqs, got[len(got)-1].BatchSeq)
		if i == 0 {
			i = 1
			if got, _, err = tx.UsageRows(rowQuery([]models.Meter{m}, seqs[:1], "", 0), 0); err != nil {
				return 0, false, err
			}
		}
		seqs = seqs[:i]
		got = slices.DeleteFunc(got, func(r store.UsageRow) bool { return r.BatchSeq > seqs[i-1] })
	}
	if err := apply(tx, []models.Meter{m}, got); err != nil {
		return 0, false, err
	}
	m.BackfillSeq = seqs[len(seqs)-1]
	if len(batches) < stepBatches && len(seqs) == len(batches) {
		// The page took every batch left: nothing to look for (the search would walk
		// every batch received since, the backfill's own as well as the consumer's).
		m.BackfillAsOf = nil
		return len(got), false, tx.SaveBackfill(m)
	}
	return len(got), false, saveBackfill(tx, m, m.BackfillSeq)
}

// saveBackfill records m's progress up to batch seq with the receipt time of the oldest
// batch left, looked for from the previous one on.
func saveBackfill(tx *store.Tx, m models.Meter, seq int64) error {
	if m.BackfillAsOf != nil {
		asOf, err := tx.OldestToBackfill(m, seq, *m.BackfillAsOf)
		if err != nil {
			return err
		}
		m.BackfillAsOf = asOf
	}
	return tx.SaveBackfill(m)
}

// rowQuery selects the rows of seqs that meters count, after id after in the first.
func rowQuery(meters []models.Meter, seqs []int64, after string, maxRows int) store.RowQuery {
	var names []string
	for _, m := range meters {
		if !slices.Contains(names, m.FilterMetricName) {
			names = append(names, m.FilterMetricName)
		}
	}
	return store.RowQuery{Batches: seqs, AfterID: after, MetricNames: names, Keys: keysOf(meters), MaxRows: maxRows}
}

// keysOf lists the metadata keys meters read: their group_by keys and value keys.
func keysOf(meters []models.Meter) []string {
	keys := []string{}
	for _, m := range meters {
		for _, k := range append(slices.Clone(m.GroupBy), m.ValueKey) {
			if k != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// takeRows keeps the batches, in order, up to maxRows rows (at least one batch).
func takeRows(bs []store.Batch, maxRows int) []int64 {
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

func seqsOf(bs []store.Batch) []int64 {
	seqs := make([]int64, len(bs))
	for i, b := range bs {
		seqs[i] = b.Seq
	}
	return seqs
}

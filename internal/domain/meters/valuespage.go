package meters

import (
	"slices"
	"time"

	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/models"
)

// A values page is built under two bounds (CONTRACT §21):
//
//   - it reads at most readBudget stored figure rows, matching or not, in chunks of at
//     most chunkRows (the memory of one read);
//   - it holds at most limit+1 answer rows at once (ValuesCost.Built): the rows it returns,
//     and one more to know whether another page follows. Figures arrive in the store's
//     order (window start, account, group), which is the answer's order only when nothing
//     folds; the held rows are the smallest answer keys after the cursor seen so far,
//     sorted. A key beyond them when they are full is dropped, and so is the largest held
//     one when a smaller key arrives: keys only get smaller while the rows are full, so a
//     dropped key could never come back among the smallest, and its later figures are
//     dropped as well.
//
// A held row is final once no unread figure can fold into it or come before it (the
// frontier, which follows the read); final rows are returned in order. When the budget
// runs out first, the page ends short (even empty) and its next_page is the frontier, so
// the next page starts where this one stopped and costs the same.
var (
	readBudget = 50000 // a var only so that tests can lower it (SetReadBudget)
	chunkRows  = 1000
)

// ValuesCost is what a values page cost, for tests and benchmarks (not rendered): stored
// figure rows read, and the most answer rows held at once (at most limit+1).
type ValuesCost struct {
	Read, Built int
}

// pageBuilder builds one values page.
type pageBuilder struct {
	meter *models.Meter
	q     *ValuesQuery
	cols  []int // positions of the asked group_by keys in the meter's
	fold  bool  // fewer keys asked than the meter has: several figures make an answer row
	exact bool  // each figure read is an answer row, in order
	// inOrder: the asked keys lead the meter's (or none is asked, or all), so within a
	// window the stored order (account, groups) is the answer's order (account, asked
	// groups), and an answer row's figures are contiguous in it (see seek).
	inOrder bool
	after   cursor // the page holds answer keys after it only
	out     []*row // final rows, in order (at most limit+1)
	held    []*row // rows not final yet, sorted by key
	cost    ValuesCost
	asked   map[string]askedGroup // stored group text → the asked keys' values (bounded cache)
}

type askedGroup struct {
	vals []*string
	text string
}

// askedCache bounds pageBuilder.asked: the cache only saves parsing groups again.
const askedCache = 4096

// group is the asked part of a stored group text.
func (b *pageBuilder) group(stored string) askedGroup {
	if g, ok := b.asked[stored]; ok {
		return g
	}
	all := parseGroups(stored)
	g := askedGroup{vals: make([]*string, len(b.cols))}
	for j, c := range b.cols {
		if c < len(all) {
			g.vals[j] = all[c]
		}
	}
	g.text = stored
	if b.fold {
		g.text = groupsText(g.vals)
	}
	if len(b.asked) >= askedCache {
		clear(b.asked)
	}
	b.asked[stored] = g
	return g
}

// full tells whether the page holds all the rows it needs: limit+1 final ones.
func (b *pageBuilder) full() bool { return len(b.out) > b.q.Limit }

// add folds a figure into the answer row of key c (decoded only if the row is kept).
func (b *pageBuilder) add(c cursor, g askedGroup, decode func() (figure, error)) error {
	if c.WindowStart.Before(b.q.From) || !c.WindowStart.Before(b.q.To) || c.compare(&b.after) <= 0 {
		return nil
	}
	i, found := slices.BinarySearchFunc(b.held, &c, func(r *row, c *cursor) int { return r.cursor.compare(c) })
	if !found && len(b.out)+len(b.held) > b.q.Limit {
		if i == len(b.held) {
			return nil // after every held row, and they are enough
		}
		b.held = b.held[:len(b.held)-1] // the largest gives way
	}
	f, err := decode()
	if err != nil {
		return err
	}
	if found {
		b.held[i].fig.combine(b.meter.Aggregation, &f)
		return nil
	}
	c.windowEnd = period.End(c.WindowStart, b.q.Window)
	b.held = slices.Insert(b.held, i, &row{cursor: c, vals: g.vals, fig: f})
	b.cost.Built = max(b.cost.Built, len(b.out)+len(b.held))
	return nil
}

// emit moves the held rows up to frontier (included) to the final ones.
func (b *pageBuilder) emit(frontier *cursor) {
	n := 0
	for n < len(b.held) && !b.full() && b.held[n].compare(frontier) <= 0 {
		b.out = append(b.out, b.held[n])
		n++
	}
	b.held = b.held[n:]
}

// emitAll makes every held row final: nothing unread can change them.
func (b *pageBuilder) emitAll() {
	for len(b.held) > 0 && !b.full() {
		b.out = append(b.out, b.held[0])
		b.held = b.held[1:]
	}
}

// page is the answer: the first limit final rows, and where the next page starts: after
// the last row when more rows are final, at stop when the budget ran out first ("" when
// the read reached the end).
func (b *pageBuilder) page(groupBy []string, stop *cursor) ValuesPage {
	p := ValuesPage{Cost: b.cost}
	n := min(len(b.out), b.q.Limit)
	for _, r := range b.out[:n] {
		p.Data = append(p.Data, r.value(groupBy))
	}
	switch {
	case b.full():
		p.NextPage = b.out[n-1].cursor.encode()
	case stop != nil:
		p.NextPage = stop.encode()
	}
	return p
}

// budget is how many rows the next read may take (0: the budget is spent): a chunk, or,
// when each figure is an answer row (exact), just the rows the page still needs.
func (b *pageBuilder) budget() int {
	n := min(chunkRows, readBudget-b.cost.Read)
	if b.exact {
		n = min(n, b.q.Limit+1-len(b.out))
	}
	return n
}

// minuteOf is the start of minute m of the hour starting at h.
func minuteOf(h time.Time, m int) time.Time { return h.Add(time.Duration(m) * time.Minute) }

// leading tells whether the asked keys' positions are the meter's first ones.
func leading(cols []int) bool {
	for i, c := range cols {
		if c != i {
			return false
		}
	}
	return true
}

// seek is the stored group text after which a read of c's window and account finds every
// figure of the answer rows after c, and none before (FigureQuery.After). A group text is
// a JSON array, its elements JSON strings or null, none a prefix of another; the meter's
// group_by never changes, so every stored text has as many elements:
//   - no fold: the asked text is the stored one;
//   - asked keys leading the meter's (inOrder): the stored texts of the row [e1,…,ek] are
//     exactly those that start with `[e1,…,ek,`, so they all sort before `[e1,…,ek-`
//     (',' + 1), which no stored text is, and every later row's texts after it; with no
//     key asked (k = 0) the row is the whole account, whose texts (all starting with '[')
//     sort before "\x7f";
//   - other asked keys: an account's rows interleave in its stored texts, so the read
//     starts at the account's first figure, and rows up to c are skipped (add).
func (b *pageBuilder) seek(c *cursor) string {
	switch {
	case c.Groups == "" || !b.fold:
		return c.Groups
	case !b.inOrder:
		return ""
	case len(b.cols) == 0:
		return "\x7f"
	}
	return c.Groups[:len(c.Groups)-1] + "-"
}
